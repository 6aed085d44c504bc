#pragma once
//! Experiments over scenario variants: sweeps, the optimum checkpoint interval, and paired
//! comparisons. Every variant runs the same trial seeds (common random numbers): it sees the same
//! fault timeline, so differences between variants are paired and their intervals narrow.

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

//! One field to change: a JSON pointer into the scenario document and its new value.
struct Setting {
  std::string pointer;
  nlohmann::json value;
};

//! "10min" stays a string; "8", "0.5", "true", "{...}" are JSON. Used for --set values.
nlohmann::json parse_setting_value(const std::string& text);
//! The scenario document with `settings` applied, validated (ScenarioInvalid names the pointer).
Scenario scenario_variant(const nlohmann::json& document, const std::string& file, const std::vector<Setting>& settings);
nlohmann::json read_scenario_document(const std::string& path);  //!< throws ScenarioInvalid if unreadable

//! Per-trial goodputs of `options.trials` trials, spread over the MPI ranks (if any), in trial order
//! on every rank.
std::vector<double> spread_goodputs(const Scenario& scenario, const RunOptions& options);

struct VariantResult {
  std::vector<Setting> settings;
  std::vector<double> goodput;  //!< per trial
  Summary summary;
};

using Progress = std::function<void(std::size_t done, std::size_t total)>;

std::vector<VariantResult> run_variants(const nlohmann::json& document, const std::string& file,
                                        const std::vector<std::vector<Setting>>& variants, const RunOptions& options,
                                        const Progress& progress = {});

struct OptimizeOptions {
  double from_s = 0, to_s = 0;  //!< interval range; 0: a wide bracket around the implied Young value
  int points = 25;              //!< log-spaced grid
  int trials = 200;
  int max_trials = 3200;
  double ci_target = 0;         //!< grow trials until the best point's goodput CI half-width is below this
  std::uint64_t seed = 1;
  int jobs = 1;
  int bootstrap = 200;
  bool rate_uncertainty = true;  //!< RunOptions::rate_uncertainty
};

struct OptimizeResult {
  std::vector<double> interval_s;       //!< the grid
  std::vector<Summary> goodput;         //!< at each grid point
  double best_interval_s = 0;           //!< peak of a quadratic fit in log interval near the best point
  double best_ci_low_s = 0, best_ci_high_s = 0;  //!< bootstrap over trials (95%)
  Summary best_goodput;                 //!< simulated at the best interval
  Summary given;                        //!< the scenario as it is (its own policy), on the same seeds
  std::vector<Summary> vs_given;        //!< each grid point's goodput less the scenario's, per trial (paired)
  Summary best_vs_given;                //!< the best interval's, likewise
  int trials = 0;
  bool fitted = false;                  //!< false: the best grid point, the fit was not a peak
};

//! The checkpoint interval (policies.checkpoint, fixed) that maximizes simulated goodput.
OptimizeResult optimize_interval(const nlohmann::json& document, const std::string& file, const OptimizeOptions& options,
                                 const Progress& progress = {});

struct PairedDifference {
  Summary paired;    //!< of per-trial differences (variant - baseline), same seeds
  Summary unpaired;  //!< the same means, with a Welch interval as if the trials were independent
};
PairedDifference paired_difference(const std::vector<double>& variant, const std::vector<double>& baseline);

//! The best of a set of policy combinations (e.g. elastic mode x spares x precheck), on common
//! random numbers. Trials double (up to `max_trials`) until the paired 95% CI of best - runner-up
//! excludes zero: the ranking is then one the trials can tell apart.
struct ChoiceResult {
  std::vector<VariantResult> variants;  //!< in the order given
  std::size_t best = 0, runner_up = 0;
  PairedDifference margin;              //!< best - runner-up, per trial
  bool separated = false;
  int trials = 0;
};
ChoiceResult choose_policy(const nlohmann::json& document, const std::string& file,
                           const std::vector<std::vector<Setting>>& combinations, const OptimizeOptions& options,
                           const Progress& progress = {});

}  // namespace ctwin
