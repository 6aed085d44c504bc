// The spare pool's policy over many trials: both engines carry it out alike, trial by trial, and a
// top-up's gain is paired on the same fault timelines.
#include <catch2/catch.hpp>

#include "sim/experiments.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("the drivers agree trial by trial on a scenario whose pool is topped up and its repairs expedited", "[spares][engines]") {
  nlohmann::json doc = test::read_json(test::fixture("features.json"));
  doc["policies"]["spare_pool"] = {{"top_up", {{"nodes", 2}, {"delay", "8h"}, {"at_most", 6}}}, {"expedited_repair", "12h"}};
  const Scenario scenario = test::scenario_from(doc);
  RunOptions native = test::run_options(6, 3);
  native.contention = false;
  RunOptions simgrid = native;
  simgrid.engine = EngineKind::Simgrid;
  const RunResult a = run_trials(scenario, native), b = run_trials(scenario, simgrid);
  test::require_same_trials(a, b);
  for (const TrialResult& t : a.trials) CHECK(t.ledger.total() == t.wall_us);
}

TEST_CASE("on the same faults, a top-up and expedited repairs cut the wait for spares and raise goodput", "[spares][experiments]") {
  const std::string file = test::fixture("minimal.json");
  nlohmann::json doc = test::read_json(file);
  doc["cluster"]["spare_nodes"] = 0;  // every replacement waits for its repair
  doc["cluster"]["nodes"] = 8;
  const auto r = run_variants(doc, file,
                              {{}, {{"/policies/spare_pool/top_up/nodes", 2}}, {{"/policies/spare_pool/expedited_repair", "12h"}}},
                              test::run_options(60, 4));
  for (std::size_t v = 1; v < r.size(); ++v) {
    INFO("variant " << v);
    const PairedDifference d = paired_difference(r[v].goodput, r[0].goodput);
    CHECK(d.paired.ci95_low > 0);
  }
}
