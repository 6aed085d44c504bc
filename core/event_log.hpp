#pragma once
//! The event log (docs/event-log.md), written and read here only: `ctwin run --events` writes a
//! trial's log, the live supervisor its run's, and calibration and `ctwin validate` read both.
//! CSV, header `time_s,node,gpu,kind,code,detail`, closed by one `ledger` row per category.

#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.hpp"
#include "core/ledger.hpp"
#include "core/text_records.hpp"

namespace ctwin {

inline constexpr std::string_view kEventLogHeader = "time_s,node,gpu,kind,code,detail";
//! Whether a file whose first line is `line` is an event log, to be read (and judged) as one: its
//! first four columns are the header's. The readers that take several kinds of trace ask this.
inline bool looks_like_event_log(std::string_view line) { return line.starts_with(kEventLogHeader.substr(0, 20)); }

//! A fault class as the log names it: `fault_class` indexes a table of these.
struct EventClass {
  std::string name;
  const char* part = nullptr;  //!< the part a network class strikes ("leaf", "spine", "cable"), else null
};

//! One row, without its newline. `detail` is the class (and the network part), `speed=` on
//! slow_begin, `replicas=` on shrunk and grown, then `note`: free text for a person (a live
//! run's step, command or reading), kept to one CSV field.
std::string event_log_row(const RunEvent& event, std::span<const EventClass> classes, std::string_view note = {});
//! The closing `ledger` rows at `wall`: `<category>=<seconds>` with six decimals, in report order.
std::string ledger_rows(Micros wall, const Ledger& ledger);
//! A whole log: header, rows, and the ledger rows when `ledger` is given.
std::string event_log_csv(std::span<const EventClass> classes, std::span<const RunEvent> events, const Ledger* ledger = nullptr,
                          Micros wall = 0);

//! A row as read back: the detail stays text (its first word is the class where there is one).
struct LoggedEvent {
  double time_s = 0;
  int node = -1;  //!< from "node-<id>"; -1 for job-wide events
  int gpu = -1;
  EventKind kind = EventKind::Fault;
  int code = -1;  //!< Xid, when the fault's class names one
  std::string detail;
  int line = 0;
};

struct EventLog {
  std::vector<LoggedEvent> events;
  ReadReport report;
};

//! Malformed rows (an unknown kind, a bad number) are reported by line and skipped.
EventLog read_event_log(std::istream& in, const std::string& file);

//! The fault class a row names: the detail's first word, on the kinds the writer puts a class on
//! (a live row's note follows it: "software signal 9 (Killed)" is class "software"); empty where
//! the row names none (a key=value such as step=5, or a kind without a class).
std::string_view logged_class(const LoggedEvent& event);
//! A `key=value` field of a row's detail (a `start` row's `host=`, `job=`, `nodes=`); nullopt where
//! it has none. A live node's start row names its host; a job master's, the job and its width.
std::optional<std::string> detail_field(const std::string& detail, std::string_view key);

}  // namespace ctwin
