#pragma once
//! `ctwin sweep`, `ctwin optimize` and `ctwin compare`: the decision tools (docs/cli.md).

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/monte_carlo.hpp"

namespace ctwin {

class ExperimentCommands {
 public:
  explicit ExperimentCommands(CLI::App& app);
  //! The exit code if one of these commands was chosen.
  std::optional<int> dispatch();

 //! The options every decision tool takes.
  struct Common {
    std::string scenario;
    int trials = 200;
    std::uint64_t seed = 1;
    int jobs = 1;
    std::string json, csv, svg;
    std::string rate_uncertainty = "on";
    RunOptions run_options() const {
      RunOptions options;
      options.trials = trials;
      options.seed = seed;
      options.rate_uncertainty = rate_uncertainty == "on";
      options.jobs = jobs;
      return options;
    }
  };

 private:
  int sweep();
  int optimize();
  int optimize_combination();
  int compare();

  void add_common(CLI::App* command, Common& common);

  CLI::App* sweep_cmd_ = nullptr;
  CLI::App* optimize_cmd_ = nullptr;
  CLI::App* compare_cmd_ = nullptr;
  Common sweep_, optimize_, compare_;
  std::vector<std::string> sets_, variants_, choices_;
  std::string from_, to_;
  int points_ = 25;
  double ci_target_ = 0;
  int max_trials_ = 3200;
};

}  // namespace ctwin
