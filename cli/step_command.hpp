#pragma once
//! `ctwin step SCENARIO`: the step time of the scenario's workload on its fabric, in a given state.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ctwin {

class StepCommand {
 public:
  explicit StepCommand(CLI::App& app);
  std::optional<int> dispatch();

 private:
  int run();
  CLI::App* cmd_ = nullptr;
  std::string scenario_, json_;
  std::vector<std::string> slow_gpus_, nics_, nvlinks_;
  int dp_width_ = 0;
  double uplink_ = 1;
  bool sensitivity_ = false;
};

}  // namespace ctwin
