#pragma once
//! `ctwin validate SCENARIO --against EVENT_LOG [--trials N] [--seed S] [--json report.json]`.

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ctwin {

class ValidateCommand {
 public:
  explicit ValidateCommand(CLI::App& app);
  std::optional<int> dispatch();

 private:
  int run();
  CLI::App* cmd_ = nullptr;
  std::string scenario_, against_, json_, engine_ = "native", rate_uncertainty_ = "both";
  int trials_ = 200, jobs_ = 1;
  std::uint64_t seed_ = 1;
  double confidence_ = 0.95;
};

}  // namespace ctwin
