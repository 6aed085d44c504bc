#pragma once
//! `ctwin timeline EVENTS.csv --out TRACE.json`: a Chrome trace (Perfetto) from any event log,
//! a live job's (`ctwin live run --events`, the master's `--events`) or a simulated trial's, drawn
//! as `ctwin run --timeline` draws a trial: the job's phases, checkpoints, faults, a track per node.

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ctwin {

class TimelineCommand {
 public:
  explicit TimelineCommand(CLI::App& app);
  std::optional<int> dispatch();

 private:
  int run();
  CLI::App* cmd_ = nullptr;
  std::string log_, out_, title_;
};

}  // namespace ctwin
