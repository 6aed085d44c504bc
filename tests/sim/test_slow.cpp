// The slow tier (`ctest -L slow`): the same invariants on the full-size reference scenarios.
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("the drivers agree trial by trial on the 16,384-GPU scenario", "[slow][simgrid]") {
  for (const char* name : {"scenarios/default.json", "scenarios/llama3_405b_16k.json", "scenarios/llama3_405b_16k_full.json"}) {
    INFO(name);
    const Scenario scenario = load_scenario(test::repo_file(name));
    // Contention off: a persist beside the training's traffic is where the engines differ by
    // design (docs/model.md); everything else must agree trial by trial.
    RunOptions native = test::run_options(100, 31337), simgrid = test::run_options(100, 31337, 2, EngineKind::Simgrid);
    native.contention = simgrid.contention = false;
    const RunResult a = run_trials(scenario, native);
    const RunResult b = run_trials(scenario, simgrid);
    test::require_same_trials(a, b);
    for (const auto& t : a.trials) REQUIRE(t.ledger.total() == t.wall_us);
  }
}

TEST_CASE("the default scenario's interruption rate matches the Llama 3 figures it was built from", "[slow]") {
  // 413 modelled interruptions in 54 days on 16,384 GPUs, scaled to the job's 9,984 GPUs.
  const Scenario scenario = load_scenario(test::repo_file("scenarios/default.json"));
  const RunResult r = run_trials(scenario, test::run_options(2000, 1));
  double crashes = 0;
  for (const auto& t : r.trials)
    for (std::size_t f = 0; f < scenario.faults.size(); ++f)
      if (scenario.faults[f].effect != Effect::Slow) crashes += static_cast<double>(t.fault_counts[f]);
  const double per_day = crashes / r.trials.size() / 54.0;
  const double expected = 413.0 / 54.0 * 9984.0 / 16384.0;
  CHECK(per_day == Approx(expected).epsilon(0.01));
}
