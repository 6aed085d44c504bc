// What a forecast says before it is trusted (unit tier): a fixed checkpoint interval shorter than a
// save or longer than the run, and rates that would make the run's fault draws cost minutes.

#include <catch2/catch.hpp>

#include "models/fault_timeline.hpp"
#include "support/fixtures.hpp"
#include "trial/trial_config.hpp"

using namespace ctwin;

namespace {

//! The default scenario with its checkpoint policy fixed at `interval` and its save `save`.
TrialConfig config_with(const std::string& interval, double save_s) {
  auto doc = test::read_json(test::repo_file("scenarios/default.json"));
  doc["policies"]["checkpoint"] = {{"type", "fixed"}, {"interval", interval}};
  const Scenario s = test::scenario_from(doc);
  return make_trial_config(s, {seconds_to_micros(save_s), seconds_to_micros(10), "scenario"});
}

bool says(const std::vector<std::string>& warnings, const std::string& text) {
  for (const auto& w : warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("run warnings: a checkpoint interval shorter than a save, or longer than the run, is said with what it costs", "[trial]") {
  const auto slip = checkpoint_warnings(config_with("1us", 2.9));
  CHECK(says(slip, "/policies/checkpoint/interval: a checkpoint every 1 us of compute, and each save stalls the job 2.9 s"));
  CHECK(says(slip, "goodput can be at most 0.00%"));
  const auto never = checkpoint_warnings(config_with("100d", 2.9));  // the default runs 54 days
  CHECK(says(never, "no checkpoint is ever taken"));
  CHECK(checkpoint_warnings(config_with("30min", 2.9)).empty());
  CHECK(checkpoint_warnings(config_with("2s", 1.0)).empty());  // a third of the time saving: costly, not absurd
}

TEST_CASE("run warnings: rates that draw a billion faults in a run say so before it starts, with the count and the time", "[trial]") {
  auto doc = test::read_json(test::repo_file("scenarios/default.json"));
  const Scenario plain = test::scenario_from(doc);
  const TrialConfig config = make_trial_config(plain, {seconds_to_micros(3), seconds_to_micros(1), "scenario"});
  // The default's classes draw some hundreds of faults a trial: no run of a sane size is costly.
  const double strikes = FaultTimelineModel::from(plain).expected_strikes(config.end_us);
  CHECK(strikes > 10);
  CHECK(strikes < 1e4);
  CHECK_FALSE(trial_cost_warning(plain, config, 100'000));
  // A rate in the wrong unit: 5,000 a GPU-year on 10,240 GPUs for 54 days is 7.6 million a trial.
  auto busy = doc["faults"][0];
  busy["name"] = "busy";
  busy["rate"] = "5000/gpu-year";
  busy.erase("xid");
  busy.erase("rate_uncertainty");
  doc["faults"].push_back(busy);
  const Scenario costly = test::scenario_from(doc);
  CHECK_FALSE(trial_cost_warning(costly, config, 10));
  const auto w = trial_cost_warning(costly, config, 1000);
  REQUIRE(w);
  CHECK(w->find("faults a trial") != std::string::npos);
  CHECK(w->find("in 1000 trials") != std::string::npos);
  CHECK(w->find("of CPU") != std::string::npos);
}
