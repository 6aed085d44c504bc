#pragma once
//! The live run's event log, in the simulator's format and through its one writer
//! (core/event_log.hpp), so that `ctwin validate SCENARIO --against LOG` holds a real run against
//! its forecast. The file is rewritten atomically (at most once a second while rows come, and at
//! the close), so a reader never sees a torn row and a killed supervisor leaves a valid log of
//! what happened until then. Rows stay in time order whatever order they come in: a node's
//! observation and node rank 0's progress reach the master by different reports, each dated when
//! it was seen (rows of one time keep the order they came in).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_log.hpp"
#include "policies/fault_classes.hpp"

namespace ctwin::live {

class LiveEventLog {
 public:
  explicit LiveEventLog(std::string path) : path_(std::move(path)) {}
  //! The index of a fault class in this log's table (what `RunEvent::fault_class` holds), added
  //! at its first use: a live run meets the scenario's classes and the catalogue's.
  int class_index(const std::string& name);
  //! A row, in its place by time; `note` is free text after the class (a step, a command, a reading).
  void add(const RunEvent& event, std::string_view note = {});
  //! A row about `node` (-1: the job) and `gpu` (-1: none); `fault_class` names the class it
  //! concerns (empty: none); `code` is an Xid (-1: none).
  void add(Micros at, EventKind kind, std::string_view note, int node, int gpu, int code, const std::string& fault_class, double speed);
  //! The rows that open an interruption, for the job and for a node alone alike: the fault (with
  //! `detail`), the interruption and, for silent corruption, the rollback.
  void interruption(Micros at, int node, int gpu, int code, const LiveFaultClass& fault, std::string_view detail);
  //! Writes now when rows are pending and a second has passed since the last write (or `force`).
  void flush(bool force = false);
  //! Adds `end` and the ledger rows at `wall`, then writes.
  void close(Micros wall, const Ledger& ledger);
  const std::string& path() const { return path_; }
  //! The classes' names and the rows so far, and their return (a restarted job master's journal).
  std::vector<std::string> class_names() const;
  const std::vector<std::string>& row_texts() const { return rows_; }
  void resume(const std::vector<std::string>& class_names, std::vector<std::string> rows);
  std::size_t rows() const { return rows_.size(); }

 private:
  std::string path_;
  std::vector<EventClass> classes_;
  std::vector<std::string> rows_;
  std::vector<Micros> times_;  //!< each row's
  std::string ledger_rows_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point written_{};
};

}  // namespace ctwin::live
