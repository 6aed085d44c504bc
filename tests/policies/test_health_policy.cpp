// What the live agent's observations mean, decided in policies/ from typed symptoms: faults with
// the Xid they read as, warnings that ask for a checkpoint, counts, slow spans; and the class of
// an interruption, with its effect (an sdc class rolls back) and remediation.
#include <catch2/catch.hpp>

#include "policies/fault_classes.hpp"
#include "policies/health_policy.hpp"
#include "policies/runtime_health.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

TEST_CASE("health symptoms are faults, warnings, counts or slow spans", "[policies][health]") {
  CHECK(judge_health(Symptom::Xid, 13).response == HealthResponse::Fault);
  CHECK(judge_health(Symptom::Xid, 13).xid == 13);
  CHECK(judge_health(Symptom::EccUncorrected).xid == 48);
  CHECK(judge_health(Symptom::RowRemapFailed).xid == 64);
  CHECK(judge_health(Symptom::NvlinkDown).xid == 74);
  for (Symptom gone : {Symptom::GpuLost, Symptom::MonitorStuck}) {
    CHECK(judge_health(gone).response == HealthResponse::Fault);
    CHECK(judge_health(gone).xid == 79);
    CHECK_FALSE(judge_health(gone).trainer_can_save);  // asking a trainer on a lost GPU to save would only wait
  }
  // A row remap pending is a GPU reset at the next checkpoint, by NVML's flag or by its Xid 63.
  CHECK(judge_health(Symptom::RowRemapPending).response == HealthResponse::ResetAtCheckpoint);
  CHECK(judge_health(Symptom::Xid, 63).response == HealthResponse::ResetAtCheckpoint);
  CHECK(judge_health(Symptom::RowRemapPending).xid == 63);
  CHECK(judge_health(Symptom::HotGpu).response == HealthResponse::Warning);
  for (Symptom counted : {Symptom::EccCorrected, Symptom::NvlinkErrors, Symptom::Baseline})
    CHECK(judge_health(counted).response == HealthResponse::Observe);
  CHECK(judge_health(Symptom::Throttled).response == HealthResponse::SlowBegin);
  CHECK(judge_health(Symptom::ThrottleCleared).response == HealthResponse::SlowEnd);
}

TEST_CASE("a live interruption takes the scenario's class, else the catalogue's", "[policies][classes]") {
  Scenario scenario;
  FaultClass mine;
  mine.name = "my_gpu_loss";
  mine.xid = 79;
  mine.action = Act::Reboot;
  scenario.faults.push_back(mine);
  CHECK(classify_xid(scenario, 79).name == "my_gpu_loss");
  CHECK(classify_xid(scenario, 79).act == Act::Reboot);
  // A diagnosis category holds the Xids its covers name; the first class holding one takes it.
  FaultClass category;
  category.name = "gpu_faulty";
  category.covers = FaultClass::Covers{std::vector<int>{74, 62}, {}, "a category"};
  scenario.faults.push_back(category);
  CHECK(classify_xid(scenario, 74).name == "gpu_faulty");
  CHECK(classify_xid(scenario, 62).name == "gpu_faulty");
  scenario.faults.pop_back();
  CHECK(classify_xid(scenario, 48).name == "xid48_hbm_dbe");  // the catalogue's
  // An Xid the catalogue lacks takes NVIDIA's effect and action from the Xid table.
  CHECK(classify_xid(scenario, 63).effect == Effect::None);
  CHECK(classify_xid(scenario, 63).act == Act::None);
  CHECK(classify_xid(scenario, 62).act == Act::ResetGpu);
  CHECK(classify_xid(scenario, 95).name == "xid95_uncontained_ecc");
  CHECK(classify_xid(scenario, 63).known);
  CHECK(classify_xid(scenario, 63).name == "xid_63");  // as calibration names it
  // An Xid in no table is said to be unknown, and it is never silently a restart.
  const LiveFaultClass unknown = classify_xid(scenario, 999);
  CHECK(unknown.name == "xid_999");
  CHECK_FALSE(unknown.known);
  CHECK(unknown.act == Act::ResetGpu);
  CHECK(classify_named(scenario, "row_remap_pending").act == Act::ResetGpu);

  const LiveFaultClass nan = classify_stop(scenario, LiveStop::NanLoss);
  CHECK(nan.effect == Effect::Sdc);
  CHECK(nan.rolls_back());
  CHECK_FALSE(classify_stop(scenario, LiveStop::Crash).rolls_back());
  CHECK(classify_stop(scenario, LiveStop::Hang).effect == Effect::Hang);
  CHECK_FALSE(trainer_can_save_after(LiveStop::Hang));
  CHECK(trainer_can_save_after(LiveStop::Crash));
}

TEST_CASE("a live stop counts as the scenario's own class, as policies.live_stops names it", "[policies][health]") {
  nlohmann::json doc = ctwin::test::read_json(ctwin::test::fixture("minimal.json"));
  doc["faults"].push_back({{"name", "software"}, {"rate", "0.1/node-day"}, {"effect", "crash"}, {"detection", "10s"},
                           {"recovery", {{"action", "restart"}, {"duration", "1min"}}}});
  const Scenario defaults = ctwin::test::scenario_from(doc);
  CHECK(classify_stop(defaults, LiveStop::Crash).name == "software_bug");  // the catalogue's name
  doc["policies"]["live_stops"] = {{"crash", "software"}};
  const Scenario named = ctwin::test::scenario_from(doc);
  CHECK(classify_stop(named, LiveStop::Crash).name == "software");
  CHECK(classify_stop(named, LiveStop::Crash).act == Act::Restart);
  CHECK(classify_stop(named, LiveStop::Hang).name == "nccl_hang");
  doc["policies"]["live_stops"] = {{"hang", "no_such_class"}};
  try {
    ctwin::test::scenario_from(doc, "bad.json");
    FAIL("an unknown class was accepted");
  } catch (const ScenarioInvalid& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].pointer == "/policies/live_stops/hang");
  }
}

TEST_CASE("loss spike: a run of losses far above the recent ones, dated from its first, one high batch is noise", "[policies][health]") {
  LossSpikeWatch watch(20, 6, 1.5, 4);
  std::int64_t step = 0;
  for (; step < 30; ++step) CHECK_FALSE(watch.observe(step, 3.0 - 0.01 * static_cast<double>(step) + 0.02 * static_cast<double>(step % 3)));
  CHECK_FALSE(watch.observe(step++, 9.0));  // one bad batch
  for (int i = 0; i < 5; ++i) CHECK_FALSE(watch.observe(step++, 2.7));
  const std::int64_t onset = step;
  std::optional<std::int64_t> seen;
  for (int i = 0; i < 4 && !seen; ++i) seen = watch.observe(step++, 12.0);
  REQUIRE(seen);
  CHECK(*seen == onset);
  CHECK(step == onset + 4);  // confirmed by four high losses in a row
}
