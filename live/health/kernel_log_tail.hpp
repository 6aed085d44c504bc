#pragma once
//! Xid lines from the kernel log, read as they are appended (`tail -F`): a file such as
//! /var/log/kern.log, or a FIFO fed by `dmesg -w` / `journalctl -kf`. Lines are parsed by the
//! calibration's reader (calibration/readers/xid_log.hpp), so the live controller and `ctwin
//! calibrate` read the same formats. Only lines written after the tail starts count.

#include <cstdint>
#include <string>
#include <vector>

#include "live/health/health_event.hpp"

namespace ctwin::live {

class KernelLogTail {
 public:
  //! `bus_ids` (NVML's, by GPU index) name the GPU of an Xid line; empty: the GPU is unknown.
  KernelLogTail(std::string path, std::vector<std::string> bus_ids);
  ~KernelLogTail();
  KernelLogTail(const KernelLogTail&) = delete;
  KernelLogTail& operator=(const KernelLogTail&) = delete;

  //! The Xid faults in lines completed since the last call. A file that shrank was rotated or
  //! truncated: it is read again from its start.
  std::vector<HealthEvent> poll();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> bus_ids_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::string partial_;
};

}  // namespace ctwin::live
