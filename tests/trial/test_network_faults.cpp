// Network faults on the trial: the blast radius comes from the topology, spares stand in for the
// nodes behind a failed switch, and those nodes come back when the switch is replaced.
#include <catch2/catch.hpp>

#include <memory>

#include "trial/trial.hpp"
#include "trial/trial_config.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

using test::run_scripted;
using test::Scripted;

TrialConfig fabric_config(int spares, const char* interval = "30min") {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["cluster"]["spare_nodes"] = spares;
  doc["policies"]["checkpoint"]["interval"] = interval;
  const Scenario scenario = test::scenario_from(doc);
  return make_trial_config(scenario, {*scenario.checkpoint.save_us, *scenario.checkpoint.restore_us, "scenario"});
}

std::vector<int> nodes_with(const std::vector<RunEvent>& events, EventKind kind, Micros at) {
  std::vector<int> out;
  for (const auto& e : events)
    if (e.kind == kind && e.time == at) out.push_back(e.node);
  return out;
}

}  // namespace

TEST_CASE("a ToR failure takes its rack out of the job and spares from another rack stand in", "[network]") {
  const TrialConfig c = fabric_config(4);
  const Micros t = 1000 * s, back = t + (10 + 50 + 3600) * s;
  const Scripted run = run_scripted(c, {{t, 0, 1, -1}});  // class 0 = tor, leaf 1 = rack 1: nodes 4..7
  CHECK(run.result.fault_counts[0] == 1);
  CHECK(nodes_with(run.events, EventKind::NodeDown, t) == std::vector<int>{4, 5, 6, 7});
  CHECK(std::vector<int>(run.slots.begin() + 4, run.slots.begin() + 8) == std::vector<int>{16, 17, 18, 19});
  CHECK(run.result.ledger[Category::WaitingForSpares] == 0);
  CHECK(run.result.ledger[Category::Detection] == 10 * s);
  CHECK(run.result.ledger[Category::Diagnosis] == 50 * s);
  CHECK(run.result.ledger[Category::Restart] == 120 * s);  // restart overhead only: the spares were there
  // The rack's nodes return to the pool when the switch is replaced.
  CHECK(nodes_with(run.events, EventKind::NodeUp, back) == std::vector<int>{4, 5, 6, 7});
  CHECK(run.result.ledger.total() == run.result.wall_us);
}

TEST_CASE("with too few spares the job waits for the switch, then gets its rack back", "[network]") {
  const TrialConfig c = fabric_config(2);
  const Micros t = 1000 * s, back = t + (10 + 50 + 3600) * s;
  const Scripted run = run_scripted(c, {{t, 0, 2, -1}});  // rack 2: nodes 8..11
  CHECK(run.result.ledger[Category::WaitingForSpares] == back - (t + 60 * s));
  // Two slots got the spares; the other two got rack 2's nodes back when the switch returned.
  std::vector<int> rack2(run.slots.begin() + 8, run.slots.begin() + 12);
  std::sort(rack2.begin(), rack2.end());
  CHECK(rack2 == std::vector<int>{8, 9, 16, 17});
  CHECK(run.result.ledger.total() == run.result.wall_us);
}

TEST_CASE("a switch that serves no job node interrupts nothing", "[network]") {
  const TrialConfig c = fabric_config(4);
  const Scripted spare_rack = run_scripted(c, {{1000 * s, 0, 4, -1}});  // rack 4: the spares
  CHECK(spare_rack.result.fault_counts[0] == 0);
  CHECK(spare_rack.result.ledger[Category::LostProgress] == 0);
  CHECK(nodes_with(spare_rack.events, EventKind::NodeDown, 1000 * s) == std::vector<int>{16, 17, 18, 19});
  const Scripted idle_rack = run_scripted(c, {{1000 * s, 0, 5, -1}});  // rack 5: nobody's
  CHECK(idle_rack.result.fault_counts[0] == 0);
}

TEST_CASE("a spine failure slows the whole job until it is replaced", "[network]") {
  const TrialConfig c = fabric_config(4, "10h");  // no save inside the episode: saves are not slowed
  const Scripted run = run_scripted(c, {{1000 * s, 1, 0, -1}});
  CHECK(run.result.fault_counts[1] == 1);
  CHECK(run.result.ledger[Category::LostProgress] == 0);
  // 0.8 speed for detection + replacement = 2 h 1 min: a fifth of it is degraded.
  CHECK(run.result.ledger[Category::Degraded] == Approx(0.2 * 7260 * s).margin(1));
}

TEST_CASE("a rail switch loses one rail per node: NCCL errors crash the job, or it runs slower", "[network]") {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["policies"]["checkpoint"]["interval"] = "10h";  // no save inside the slow episode
  doc["cluster"]["topology"] = {{"shape", "rail_optimized"}, {"nodes_per_rack", 4}, {"nodes_per_unit", 8},
                                {"spines", 2}, {"nic_bandwidth", "400Gbps"}};
  SECTION("crash: the unit's nodes leave the job") {
    const Scenario scenario = test::scenario_from(doc);
    const TrialConfig c = make_trial_config(scenario, {10 * s, 20 * s, "scenario"});
    const Scripted run = run_scripted(c, {{1000 * s, 0, 1 * 8 + 3, -1}});  // unit 1 (nodes 8..15), rail 3
    CHECK(nodes_with(run.events, EventKind::NodeDown, 1000 * s) == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
    CHECK(run.result.ledger[Category::WaitingForSpares] > 0);  // 8 out, 4 spares
  }
  SECTION("slow: the job runs on at the speed factor") {
    doc["faults"][0]["effect"] = "slow";
    doc["faults"][0]["speed_factor"] = 0.875;  // 7 of 8 rails
    const Scenario scenario = test::scenario_from(doc);
    const TrialConfig c = make_trial_config(scenario, {10 * s, 20 * s, "scenario"});
    const Scripted run = run_scripted(c, {{1000 * s, 0, 1 * 8 + 3, -1}});
    CHECK(run.result.ledger[Category::LostProgress] == 0);
    CHECK(run.result.ledger[Category::Degraded] == Approx(0.125 * 3610 * s).margin(1));
  }
}

TEST_CASE("network faults need the fabric and the right effect and action", "[network][scenario]") {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["cluster"].erase("topology");
  doc["faults"][1]["effect"] = "crash";
  doc["faults"][1].erase("speed_factor");
  doc["faults"][0]["recovery"]["action"] = "reboot";
  try {
    test::scenario_from(doc, "net.json");
    FAIL("expected ScenarioInvalid");
  } catch (const std::exception& e) {
    const std::string text = e.what();
    CHECK(text.find("net.json: /faults/0/rate: a leaf fault needs the fabric: add /cluster/topology") != std::string::npos);
    CHECK(text.find("net.json: /faults/1/effect: a spine failure disconnects nothing") != std::string::npos);
    CHECK(text.find("net.json: /faults/0/recovery/action: a leaf fault takes action \"replace\"") != std::string::npos);
  }
}

namespace {

//! Prices a save by the question alone, and keeps every question the trial asked.
class RecordingPhysics final : public Physics {
 public:
  TransferCost cost(const TransferQuestion& q) const override {
    asked.push_back(q);
    return {(q.degraded_movers > 0 ? 20 : 10) * s, 1.0};
  }
  const char* name() const override { return "recording"; }
  mutable std::vector<TransferQuestion> asked;
};

}  // namespace

TEST_CASE("nodes on fewer rails, and their unit's uplinks, narrow the storage path for as long as the rail is out", "[network][physics]") {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["policies"]["checkpoint"]["interval"] = "10min";
  doc["cluster"]["topology"] = {{"shape", "rail_optimized"}, {"nodes_per_rack", 4}, {"nodes_per_unit", 8},
                                {"spines", 2}, {"nic_bandwidth", "400Gbps"}};
  doc["faults"][0]["effect"] = "slow";
  doc["faults"][0]["speed_factor"] = 0.875;
  const Scenario scenario = test::scenario_from(doc);
  TrialConfig c = make_trial_config(scenario, {10 * s, 20 * s, "scenario"});
  auto physics = std::make_shared<RecordingPhysics>();
  c.physics = physics;
  c.physics_saves = true;
  const Scripted healthy = run_scripted(c, {});
  physics->asked.clear();
  const Scripted run = run_scripted(c, {{1000 * s, 0, 1 * 8 + 3, -1}});  // unit 1's rail 3: nodes 8..15
  std::vector<int> degraded, rail_leaves;
  for (const auto& q : physics->asked) {
    degraded.push_back(q.degraded_movers);
    rail_leaves.push_back(q.rail_leaves_down);
  }
  CHECK(degraded == std::vector<int>{0, 8, 0});  // at the start, while the rail is out, after
  CHECK(rail_leaves == std::vector<int>{0, 1, 0});  // and its unit's uplinks lost a rail leaf's
  // The saves in the episode cost twice as much: the run saved less often per wall second.
  CHECK(run.result.ledger[Category::CheckpointSave] > healthy.result.ledger[Category::CheckpointSave]);
  CHECK(run.result.ledger.total() == run.result.wall_us);
}
