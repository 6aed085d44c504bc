#pragma once
//! `ctwin faults SCENARIO [--seed S] [--trial I] [--until D] [--json PATH]`: the fault timeline one
//! trial of `ctwin run`/`validate` draws (the same scenario, run seed and trial index give the very
//! same strikes), for people and for the twin loop, which injects it into a live job.

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ctwin {

class FaultsCommand {
 public:
  explicit FaultsCommand(CLI::App& app);
  std::optional<int> dispatch();

 private:
  int run();
  CLI::App* cmd_ = nullptr;
  std::string scenario_, json_, rate_uncertainty_ = "on";
  std::optional<std::string> until_;
  std::uint64_t seed_ = 1, trial_ = 0;
};

}  // namespace ctwin
