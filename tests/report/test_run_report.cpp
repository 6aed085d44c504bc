// What the run report counts: interruptions (the job stopped) apart from fault episodes (faults
// that struck the job, some of which stop nothing: a slow GPU, a counted-only Xid).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "models/scenario_loader.hpp"
#include "report/run_report.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("the report's interruptions are the job's stops, its fault episodes every fault that struck", "[report]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  const RunOptions options = test::run_options(40, 7);
  const RunResult result = run_trials(scenario, options);
  const RunReportInput input{scenario, options, result};
  const auto report = nlohmann::json::parse(report_json(input));

  // The mean of each trial's interruptions per wall day, as the event log's `interrupted` rows count them.
  double stops_per_day = 0;
  for (const auto& t : result.trials) stops_per_day += static_cast<double>(t.interruptions) / micros_to_days(t.wall_us);
  stops_per_day /= static_cast<double>(result.trials.size());
  double reported = 0, episodes = 0;
  for (const auto& [name, v] : report["interruptions_per_day"].items()) reported += v.get<double>();
  for (const auto& [name, v] : report["fault_episodes_per_day"].items()) episodes += v.get<double>();
  CHECK(reported == Approx(stops_per_day).epsilon(1e-12));
  CHECK(episodes > reported);  // the slow classes strike without stopping the job

  for (const auto& f : scenario.faults) {
    INFO(f.name);
    const double stops = report["interruptions_per_day"][f.name], struck = report["fault_episodes_per_day"][f.name];
    if (f.effect == Effect::Slow) {
      CHECK(stops == 0);
      CHECK(struck > 0);
    } else {
      CHECK(stops == Approx(struck));  // a crash or hang that strikes the job stops it
    }
  }
  // The terminal's `all` row is the job's stops.
  char all[64];
  std::snprintf(all, sizeof all, "%.3f", stops_per_day);
  CHECK(summary_text(input).find(all) != std::string::npos);
}

TEST_CASE("the report's per_trial rows stop at 10,000 trials and say how many more --csv has", "[report]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  RunOptions options = test::run_options(40, 7);
  const RunResult run = run_trials(scenario, options);
  // The rows are copies of real trials, tallied as a run takes them: what is checked is how many the report keeps.
  auto tallied = [&](std::size_t trials) {
    RunResult r = run;
    r.tally = RunTally(scenario.faults.size(), {}, false);
    for (std::size_t i = 0; i < trials; ++i) r.tally.add(run.trials[i % 40]);
    options.trials = static_cast<int>(trials);
    return nlohmann::json::parse(report_json({scenario, options, r}));
  };
  const auto report = tallied(kPerTrialJsonRows + 3);
  CHECK(report["per_trial"].size() == kPerTrialJsonRows);
  CHECK(report["per_trial_omitted"]["rows"] == 3);
  CHECK(report["per_trial"][0]["seed"] == run.trials[0].seed);
  CHECK_FALSE(tallied(kPerTrialJsonRows).contains("per_trial_omitted"));
}
