// Network faults over many trials on both engines.
#include <catch2/catch.hpp>

#include "trial/trial.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("network faults: both drivers agree and the ledger adds up", "[network][simgrid]") {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["faults"][0]["rate"] = "20/leaf-year";
  doc["faults"][1]["rate"] = "20/spine-year";
  doc["faults"].push_back({{"name", "gpu"}, {"rate", "2/gpu-year"}, {"effect", "crash"}, {"detection", "10s"},
                           {"recovery", {{"action", "replace"}, {"duration", "5min"}}}});
  const Scenario scenario = test::scenario_from(doc);
  const RunResult a = run_trials(scenario, test::run_options(20, 8));
  const RunResult b = run_trials(scenario, test::run_options(20, 8, 2, EngineKind::Simgrid));
  test::require_same_trials(a, b);
  std::int64_t tor = 0;
  for (const auto& t : a.trials) {
    REQUIRE(t.ledger.total() == t.wall_us);
    tor += t.fault_counts[0];
  }
  CHECK(tor > 0);
}

