#pragma once
//! NVIDIA Xid lines from whole kernel logs (the text formats: core/kernel_log.hpp; journald's JSON
//! export, one entry per line, beside them: models/kernel_journal.hpp). Lines without
//! "NVRM: Xid" are other kernel messages: skipped, but their timestamps bound the observation
//! window of their host.

#include <map>
#include <string>
#include <vector>

#include "core/text_records.hpp"

namespace ctwin::calib {

struct XidEvent {
  double time_s = 0;  //!< seconds since 1970 (UTC), or since boot for plain dmesg
  std::string host;
  std::string pci;    //!< the GPU's bus id: with the host, which GPU
  int xid = 0;
  std::string message;
  int line = 0;
};

struct XidLog {
  std::vector<XidEvent> events;
  std::map<std::string, std::pair<double, double>> window;  //!< per host: first and last timestamp seen
  ReadReport report;
};

//! `host` names the machine for formats that do not (dmesg); `year` dates syslog lines, which
//! carry none (a later line in an earlier month is taken as the next year).
XidLog read_xid_log(std::istream& in, const std::string& file, const std::string& host, int year = 1970);

}  // namespace ctwin::calib
