// Every fault effect at once, over many trials on both engines.
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("every effect at once: the drivers agree and the ledger adds up", "[effects][simgrid]") {
  const Scenario scenario = load_scenario(test::fixture("effects.json"));
  const RunResult a = run_trials(scenario, test::run_options(20, 77));
  const RunResult b = run_trials(scenario, test::run_options(20, 77, 2, EngineKind::Simgrid));
  test::require_same_trials(a, b);
  Ledger sum;
  for (const auto& t : a.trials) {
    REQUIRE(t.ledger.total() == t.wall_us);
    for (std::size_t k = 0; k < kCategoryCount; ++k) sum.us[k] += t.ledger.us[k];
  }
  CHECK(sum[Category::PlannedMaintenance] > 0);
  CHECK(sum[Category::Degraded] > 0);
}
