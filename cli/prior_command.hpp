#pragma once
//! `ctwin prior TABLE --out PRIOR.json [--name N] [--seed S]`: the population prior of fleets'
//! fault rates, fitted on a table of fleets' counts (calibration/prior_fit.hpp).

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace ctwin {

class PriorCommand {
 public:
  explicit PriorCommand(CLI::App& app);
  std::optional<int> dispatch();

 private:
  int run();
  CLI::App* cmd_ = nullptr;
  std::string table_, out_, name_ = "public-fleets";
  std::uint64_t seed_ = 1;
  int iterations_ = 20000;
  double sigma_scale_ = 1, beta_mean_ = 1, beta_sd_ = 1;
  bool no_holdouts_ = false;
};

}  // namespace ctwin
