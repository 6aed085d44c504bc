#pragma once
//! Kernel-log lines as fleets collect them, and the NVIDIA Xid reports among them:
//!   dmesg:            [ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.
//!   dmesg -T:         [Mon Mar 21 13:34:34 2022] NVRM: Xid (PCI:0000:3b:00): 79, ...
//!   syslog/journalctl: Mar 21 13:34:34 node-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...
//!   journalctl -o short-iso: 2022-03-21T13:34:34+0100 node-17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, ...
//! Older drivers print the bus id without "PCI:". Calibration reads whole logs with these
//! (calibration/readers/xid_log), the live agent a log as it grows (live/health/kernel_log_tail).

#include <optional>
#include <string>
#include <string_view>

namespace ctwin {

//! The largest Xid code read (NVIDIA's run below 200 today): a larger one is a malformed line, and
//! a scenario's `xid` above it is refused.
inline constexpr int kLargestXid = 100'000;

struct KernelStamp {
  double time_s = 0;  //!< seconds since 1970 (UTC), or since boot for plain dmesg
  std::string host;
};

//! Reads the timestamp and host at the start of each line of one log, in order: syslog lines
//! carry no year, so a later line in an earlier month is taken as the next year.
class KernelLineClock {
 public:
  //! `host` names the machine for formats that do not (dmesg); `year` dates syslog lines.
  KernelLineClock(std::string host, int year) : host_(std::move(host)), year_(year) {}
  //! nullopt when the line's prefix is none of the formats above.
  std::optional<KernelStamp> stamp(std::string_view line);

 private:
  std::string host_;
  int year_;
  int last_month_ = 0;
};

struct XidReport {
  std::string pci;  //!< the GPU's bus id, without "PCI:"
  int xid = 0;
  std::string message;
};

enum class XidLine { NotXid, Xid, Malformed };

//! Whether `line` reports an Xid ("NVRM: Xid (BUS-ID): CODE, message"), filling `report`; a line
//! that names an Xid but does not parse is Malformed, with the reason in `why`.
XidLine parse_xid_line(std::string_view line, XidReport& report, std::string& why);

}  // namespace ctwin
