#pragma once
//! The live run's event log, in the simulator's format (docs/event-log.md), so that `ctwin
//! validate SCENARIO --against LOG` holds a real run against its forecast. The file is rewritten
//! atomically (at most once a second while rows come, and at the close), so a reader never sees
//! a torn row and a killed supervisor leaves a valid log of what happened until then.

#include <chrono>
#include <string>
#include <vector>

#include "core/ledger.hpp"
#include "core/units.hpp"

namespace ctwin::live {

class LiveEventLog {
 public:
  explicit LiveEventLog(std::string path) : path_(std::move(path)) {}
  //! `node` < 0 and `gpu` < 0: empty columns; `code` < 0: none.
  void add(Micros time, const std::string& kind, int node = -1, int gpu = -1, int code = -1, const std::string& detail = "");
  //! Writes now when rows are pending and a second has passed since the last write (or `force`).
  void flush(bool force = false);
  //! Adds `end` and the ledger rows at `wall`, then writes.
  void close(Micros wall, const Ledger& ledger);
  const std::string& path() const { return path_; }
  std::size_t rows() const { return rows_.size(); }

 private:
  std::string path_;
  std::vector<std::string> rows_;
  bool dirty_ = false;
  std::chrono::steady_clock::time_point written_{};
};

}  // namespace ctwin::live
