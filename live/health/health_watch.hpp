#pragma once
//! Runs the NVML monitor on its own thread, so that a wedged driver (an NVML call that never
//! returns: the classic companion of a GPU falling off the bus) cannot stall the supervisor. A poll
//! stuck past `stall_limit_s` is itself reported, once, as a fault read as Xid 79.

#include <memory>
#include <mutex>
#include <vector>

#include "live/health/nvml_monitor.hpp"

namespace ctwin::live {

class HealthWatch {
 public:
  HealthWatch(std::unique_ptr<NvmlMonitor> monitor, double interval_s, double stall_limit_s);
  ~HealthWatch();  //!< stops the thread; one stuck in NVML is left behind (detached)
  HealthWatch(const HealthWatch&) = delete;
  HealthWatch& operator=(const HealthWatch&) = delete;

  //! The events since the last call.
  std::vector<HealthEvent> take();
  //! The latest readings, by GPU (for metrics); empty before the first poll.
  std::vector<GpuReading> readings() const;
  const std::vector<std::string>& pci_bus_ids() const { return bus_ids_; }
  const std::vector<GpuIdentity>& identities() const { return identities_; }

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::vector<std::string> bus_ids_;
  std::vector<GpuIdentity> identities_;
  double stall_limit_s_;
  bool stall_reported_ = false;
};

}  // namespace ctwin::live
