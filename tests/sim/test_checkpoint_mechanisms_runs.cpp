// Checkpoint mechanisms over many trials: flash checkpoints on both engines, and what they save.
#include <catch2/catch.hpp>

#include "trial/trial.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/native_driver.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("flash checkpoints: the drivers agree and flash beats sync on the same faults", "[mechanisms][simgrid]") {
  auto doc = test::read_json(test::fixture("effects.json"));
  const Scenario sync = test::scenario_from(doc);
  doc["checkpoint"] = {{"mechanism", "flash"}, {"save_time", "5min"}, {"restore_time", "10min"}, {"snapshot_time", "2s"},
                       {"persist_every", 3}, {"memory_restore_time", "20s"},
                       {"peer_replicas", {{"replication_time", "30s"}, {"restore_time", "1min"}}}};
  const Scenario flash_scenario = test::scenario_from(doc);
  const RunResult a = run_trials(flash_scenario, test::run_options(20, 3));
  const RunResult b = run_trials(flash_scenario, test::run_options(20, 3, 2, EngineKind::Simgrid));
  test::require_same_trials(a, b);
  const RunResult base = run_trials(sync, test::run_options(20, 3));
  double flash_goodput = 0, sync_goodput = 0;
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    REQUIRE(a.trials[i].ledger.total() == a.trials[i].wall_us);
    flash_goodput += static_cast<double>(a.trials[i].ledger[Category::Productive]) / static_cast<double>(a.trials[i].wall_us);
    sync_goodput += static_cast<double>(base.trials[i].ledger[Category::Productive]) / static_cast<double>(base.trials[i].wall_us);
  }
  CHECK(flash_goodput > sync_goodput);
}

TEST_CASE("folding compute and saves into arithmetic gives the ledger the cycle-by-cycle path gives", "[mechanisms]") {
  // An observer that wants every checkpoint turns folding off: the two paths must agree exactly.
  auto doc = test::read_json(test::fixture("effects.json"));
  for (const bool flash_mode : {false, true}) {
    INFO((flash_mode ? "flash" : "sync"));
    if (flash_mode)
      doc["checkpoint"] = {{"mechanism", "flash"}, {"save_time", "5min"}, {"restore_time", "10min"}, {"snapshot_time", "2s"},
                           {"persist_every", 3}, {"memory_restore_time", "20s"}, {"save_on_failure", true},
                           {"peer_replicas", {{"replication_time", "30s"}, {"restore_time", "1min"}}}};
    const Scenario scenario = test::scenario_from(doc);
    const TrialConfig config = make_trial_config(scenario, resolve_checkpoint_costs(scenario));
    const FaultTimelineModel faults = FaultTimelineModel::from(scenario);
    for (std::uint64_t seed = 0; seed < 60; ++seed) {
      EventRecorder every_checkpoint;
      const TrialResult folded = run_trial_native(config, faults, seed);
      const TrialResult stepped = run_trial_native(config, faults, seed, &every_checkpoint);
      REQUIRE(folded.ledger == stepped.ledger);
      REQUIRE(folded.checkpoints == stepped.checkpoints);
    }
  }
}
