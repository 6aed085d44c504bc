// Monte Carlo invariants: every trial's ledger adds up to its wall time, results do not depend on
// how many workers ran them, and the two engines produce the same ledger trial by trial where
// their physics agree (a storage network of its own: nothing runs beside a transfer).
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

using test::require_same_trials;
using test::run_options;

TEST_CASE("the ledger adds up to the wall time on every trial", "[monte-carlo]") {
  for (const std::string& path : {test::fixture("features.json"), test::fixture("minimal.json"),
                                 test::repo_file("scenarios/default.json")}) {
    INFO(path);
    const Scenario scenario = load_scenario(path);
    const RunResult r = run_trials(scenario, run_options(200, 3));
    for (const auto& t : r.trials) {
      REQUIRE(t.ledger.total() == t.wall_us);
      for (Micros us : t.ledger.us) REQUIRE(us >= 0);
    }
  }
}

TEST_CASE("the mechanisms under test are exercised by the features fixture", "[monte-carlo]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  const RunResult r = run_trials(scenario, run_options(50, 1));
  Ledger sum;
  for (const auto& t : r.trials)
    for (std::size_t c = 0; c < kCategoryCount; ++c) sum.us[c] += t.ledger.us[c];
  for (Category c : {Category::Productive, Category::CheckpointSave, Category::CheckpointRestore, Category::LostProgress,
                     Category::Detection, Category::Diagnosis, Category::Restart, Category::WaitingForSpares,
                     Category::Degraded})
    CHECK(sum[c] > 0);
  CHECK(r.costs.source == "storage model");
}

TEST_CASE("results do not depend on the number of workers", "[monte-carlo]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  require_same_trials(run_trials(scenario, run_options(40, 99, 1)), run_trials(scenario, run_options(40, 99, 3)));
}

TEST_CASE("trial i draws from trial_seed(S, i)", "[monte-carlo]") {
  const Scenario scenario = load_scenario(test::fixture("minimal.json"));
  const RunResult r = run_trials(scenario, run_options(3, 5));
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(r.trials[i].seed == trial_seed(5, i));
  CHECK(trial_seed(5, 0) != trial_seed(5, 1));
  CHECK(trial_seed(5, 0) != trial_seed(6, 0));
}

TEST_CASE("without contention to see, the native and SimGrid engines give the same ledger, trial by trial", "[monte-carlo][simgrid]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  RunOptions native = run_options(24, 2024);
  native.record_events = true;
  RunOptions simgrid = native;
  simgrid.engine = EngineKind::Simgrid;
  const RunResult a = run_trials(scenario, native);
  const RunResult b = run_trials(scenario, simgrid);
  require_same_trials(a, b);
  // Same event log too.
  REQUIRE(a.recorded_events.size() == b.recorded_events.size());
  for (std::size_t i = 0; i < a.recorded_events.size(); ++i) {
    CHECK(a.recorded_events[i].time == b.recorded_events[i].time);
    CHECK(a.recorded_events[i].kind == b.recorded_events[i].kind);
    CHECK(a.recorded_events[i].node == b.recorded_events[i].node);
  }
}

TEST_CASE("a drawn step time stretches work counted in steps, trial by trial, and the ledger still adds up", "[monte-carlo]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));  // 200,000 steps of 5 s
  const RunResult held = run_trials(scenario, run_options(30, 7));
  RunOptions drawing = run_options(30, 7);
  drawing.step_draw = RunOptions::StepDraw{0.5, 2.0, true};
  const RunResult drawn = run_trials(scenario, drawing);
  const RunResult again = run_trials(scenario, drawing);
  int longer = 0, shorter = 0;
  for (std::size_t i = 0; i < drawn.trials.size(); ++i) {
    const TrialResult& t = drawn.trials[i];
    REQUIRE(t.ledger.total() == t.wall_us);
    CHECK(t.wall_us == again.trials[i].wall_us);  // the same seed draws the same step
    const Micros work = held.trials[i].ledger[Category::Productive] + held.trials[i].ledger[Category::Degraded];
    const Micros stretched = t.ledger[Category::Productive] + t.ledger[Category::Degraded];
    longer += stretched > work;
    shorter += stretched < work;
  }
  // Log-triangular over [0.5, 2] with its mode at 1: both sides drawn.
  CHECK(longer > 3);
  CHECK(shorter > 3);
  // A range of one point changes nothing.
  RunOptions point = run_options(30, 7);
  point.step_draw = RunOptions::StepDraw{1, 1, true};
  test::require_same_trials(held, run_trials(scenario, point));
}
