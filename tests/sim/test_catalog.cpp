// The fault catalog: every entry loads, and each class follows its path from one strike:
// the right detector, the right action, the right ledger categories.
#include <catch2/catch.hpp>

#include "models/fault_catalog.hpp"
#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/step_cache.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

//! 128 GPUs as tensor-parallel groups of 8 in 4 pipeline stages.
nlohmann::json small_workload() {
  return {{"model", {{"layers", 8}, {"hidden", 4096}, {"heads", 32}, {"vocab", 32000}, {"seq_len", 2048}}},
          {"parallel", {{"tp", 8}, {"pp", 4}, {"global_batch", 16}}},
          {"efficiency", {{"gemm", 0.5}}},
          {"fabric", {{"nvlink", "300GB/s"}, {"nic", "200Gbps"}}}};
}

//! The fabric fixture (ToR racks of 4, 2 spines) with one fault class taken from the catalog.
Scenario with_entry(const std::string& name) {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["faults"] = nlohmann::json::array({{{"use", name}}});
  if (!catalog_entry(name)->contains("rate")) {
    const bool network = name == "tor_switch" || name == "cable" || name == "rail_switch_slow" || name == "spine_switch";
    doc["faults"][0]["rate"] = network ? (name == "spine_switch" ? "0.1/spine-year" : name == "cable" ? "0.1/cable-year" : "0.1/leaf-year")
                                       : "0.1/gpu-year";
  }
  if (name == "nvlink_switch_tray") {  // a tray of a multi-node NVLink domain (here: each rack of 4)
    doc["faults"][0]["rate"] = "0.1/nvswitch-year";
    doc["cluster"]["topology"]["nvlink_domain"] = {{"nodes", 4}};
  }
  if (name == "rail_switch_slow") {  // a rail switch lives in a rail-optimized fabric (on a ToR, a leaf takes the rack)
    doc["faults"][0]["rate"] = "0.1/leaf-year";
    doc["cluster"]["topology"] = {{"shape", "rail_optimized"}, {"nodes_per_rack", 4}, {"nodes_per_unit", 8},
                                  {"spines", 2}, {"nic_bandwidth", "400Gbps"}};
  }
  if (catalog_entry(name)->contains("slows")) {  // a port's factor reaches the job through the step model
    doc["workload"] = small_workload();
    doc["job"].erase("step_time");
    Scenario scenario = test::scenario_from(doc);
    resolve_step_time(scenario, "test.json");
    return scenario;
  }
  return test::scenario_from(doc);
}

struct Outcome {
  TrialResult result;
  std::vector<RunEvent> events;
  bool has(EventKind kind) const {
    return std::any_of(events.begin(), events.end(), [kind](const RunEvent& e) { return e.kind == kind; });
  }
};

Outcome strike_once(const Scenario& scenario) {
  const TrialConfig c = make_trial_config(scenario, {*scenario.checkpoint.save_us, *scenario.checkpoint.restore_us, "scenario"});
  EventRecorder log;
  Trial trial(c, 1, &log);
  bool struck = false;
  const Micros at = 1000 * s;
  while (!trial.done()) {
    const Micros timer = trial.next_timer();
    if (!struck && at < timer) {
      trial.on_fault({at, 0, 0, 2, -1});  // slot/part 0, GPU 2
      struck = true;
    } else {
      trial.on_timer(timer);
    }
  }
  return {trial.result(), log.events};
}

}  // namespace

TEST_CASE("every catalog entry loads, cites a source, and needs a rate only where none is public", "[catalog]") {
  REQUIRE(catalog_names().size() >= 20);
  for (const std::string& name : catalog_names()) {
    INFO(name);
    const auto& entry = *catalog_entry(name);
    CHECK(entry.contains("source"));
    CHECK_NOTHROW(with_entry(name));
  }
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"] = nlohmann::json::array({{{"use", "xid94_contained_ecc"}}, {{"use", "no_such_thing"}}});
  try {
    test::scenario_from(doc, "c.json");
    FAIL("expected ScenarioInvalid");
  } catch (const ScenarioInvalid& e) {
    const std::string text = e.what();
    CHECK(text.find("c.json: /faults/0/rate: the catalog has no public rate for \"xid94_contained_ecc\"") != std::string::npos);
    CHECK(text.find("c.json: /faults/1/use: no catalog entry \"no_such_thing\"") != std::string::npos);
  }
}

TEST_CASE("a scenario overrides catalog fields one by one", "[catalog]") {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"] = nlohmann::json::array({{{"use", "xid79_fallen_off_bus"}, {"detection", "1min"}, {"recovery", {{"duration", "9min"}}}}});
  const Scenario scenario = test::scenario_from(doc);
  const FaultClass& f = scenario.faults.at(0);
  CHECK(f.name == "xid79_fallen_off_bus");
  CHECK(f.xid == 79);
  CHECK(f.detection_us == 60 * s);
  CHECK(f.action == Act::Reboot);  // kept from the catalog
  CHECK(f.action_us == 540 * s);              // overridden
  REQUIRE(f.escalation);
  CHECK(f.escalation->action == Act::Replace);
}

TEST_CASE("each catalog class follows its path: detector, action, ledger category", "[catalog]") {
  for (const std::string& name : catalog_names()) {
    INFO(name);
    const Scenario scenario = with_entry(name);
    const FaultClass& f = scenario.faults.at(0);
    const Outcome o = strike_once(scenario);
    const Ledger& l = o.result.ledger;
    REQUIRE(l.total() == o.result.wall_us);
    switch (f.effect) {
      case Effect::Crash:
      case Effect::Hang:
        CHECK(o.has(EventKind::Interrupted));
        CHECK(l[Category::Detection] == f.detection_us);  // its detector's latency
        CHECK(l[Category::Diagnosis] == f.diagnosis_us);
        CHECK(l[Category::LostProgress] > 0);
        if (is_network(f.rate.component)) {
          CHECK(o.has(EventKind::NodeDown));  // the rack behind leaf 0, or the node behind cable 0
        } else {
          CHECK(o.has(EventKind::NodeDown) == (f.action == Act::Reboot || f.action == Act::Replace));
          CHECK(o.has(EventKind::ToRepair) == (f.action == Act::Replace));
          // The job's restart: the action (or the spare's swap) plus the relaunch.
          CHECK(l[Category::Restart] == f.action_us + scenario.restart_overhead_us);
        }
        break;
      case Effect::Slow:
        CHECK_FALSE(o.has(EventKind::Interrupted));
        CHECK(l[Category::LostProgress] == 0);
        CHECK(l[Category::Degraded] > 0);
        break;
      case Effect::Sdc:
        CHECK(o.has(EventKind::Rollback));
        CHECK(l[Category::Detection] == 0);   // nothing showed until the loss spiked...
        CHECK(l[Category::LostProgress] >= f.detection_us - scenario.checkpoint_policy.interval_us);  // ...then back
        CHECK(o.has(EventKind::ToRepair) == (f.action == Act::Replace));
        break;
      case Effect::Flap:
        CHECK_FALSE(o.has(EventKind::Interrupted));  // back before the watchdog
        CHECK(l[Category::Degraded] == f.action_us);
        break;
      case Effect::None:
        CHECK(o.result.fault_counts[0] == 1);
        CHECK(l[Category::Degraded] + l[Category::LostProgress] + l[Category::Detection] == 0);
        break;
    }
  }
}

TEST_CASE("a degraded NVLink slows the job through its tensor-parallel collectives", "[catalog][step]") {
  // Half the port's lanes down: the job slows by what the step model makes of it, less than half
  // (compute and the other collectives do not slow), and the class keeps its port factor's meaning.
  const Scenario s = with_entry("nvlink_degraded");
  const FaultClass& f = s.faults.at(0);
  CHECK(f.slows == SlowedPart::NvLink);
  StepState degraded;
  degraded.fabric.nvlink_factor[0] = 0.5;
  const double healthy = StepCache::shared().get(*s.workload, {}).step_s;
  const double slowed = StepCache::shared().get(*s.workload, degraded).step_s;
  CHECK(slowed > healthy);
  CHECK(f.speed_factor == Approx(healthy / slowed));
  CHECK(f.speed_factor > 0.5);
  CHECK(f.speed_factor < 1.0);
  // The same port factor on a GPU's compute would be the job's speed as it stands.
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["workload"] = small_workload();
  doc["job"].erase("step_time");
  doc["faults"] = nlohmann::json::array({{{"use", "nvlink_degraded"}, {"rate", "0.1/gpu-year"}, {"slows", "compute"}}});
  Scenario compute = test::scenario_from(doc);
  resolve_step_time(compute, "test.json");
  CHECK(compute.faults.at(0).speed_factor < f.speed_factor);  // compute is most of the step
  // Without a workload there is no step model to reach: refused, with the pointer.
  doc.erase("workload");
  doc["job"]["step_time"] = "10s";
  doc["faults"][0]["slows"] = "nvlink";
  CHECK_THROWS_WITH(test::scenario_from(doc, "n.json"), Catch::Contains("n.json: /faults/0/slows: a port's bandwidth"));
}
