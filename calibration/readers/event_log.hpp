#pragma once
//! The project's event log (docs/event-log.md): what `ctwin run --events` writes and the live
//! controller will write. Header `time_s,node,gpu,kind,code,detail`.

#include <string>
#include <vector>

#include "core/text_records.hpp"

namespace ctwin::calib {

struct LoggedEvent {
  double time_s = 0;
  int node = -1;  //!< from "node-<id>"; -1 for job-wide events
  int gpu = -1;
  std::string kind;
  int code = -1;  //!< Xid, when the fault's class names one
  std::string detail;
  int line = 0;
};

struct EventLog {
  std::vector<LoggedEvent> events;
  ReadReport report;
};

EventLog read_event_log(std::istream& in, const std::string& file);

}  // namespace ctwin::calib
