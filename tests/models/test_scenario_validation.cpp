// Every kind of bad scenario input gets its own error line `FILE: /pointer: reason`, all at once.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <functional>
#include <map>

#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using nlohmann::json;

namespace {

//! Applies `mutate` to the minimal fixture and returns the problems found.
std::vector<ScenarioProblem> problems_after(const std::function<void(json&)>& mutate) {
  json doc = test::read_json(test::fixture("minimal.json"));
  mutate(doc);
  return test::load_problems(doc);
}

bool has(const std::vector<ScenarioProblem>& problems, const std::string& pointer, const std::string& reason_part) {
  return test::says_at(problems, pointer, reason_part);
}

}  // namespace

TEST_CASE("the minimal fixture and the reference scenarios are valid", "[scenario]") {
  CHECK_NOTHROW(load_scenario(test::fixture("minimal.json")));
  CHECK_NOTHROW(load_scenario(test::fixture("features.json")));
  CHECK_NOTHROW(load_scenario(test::repo_file("scenarios/default.json")));
  CHECK_NOTHROW(load_scenario(test::repo_file("scenarios/llama3_405b_16k.json")));
}

TEST_CASE("values are stored in SI units and integer microseconds", "[scenario]") {
  const Scenario s = load_scenario(test::fixture("minimal.json"));
  CHECK(s.job.horizon_us == 30LL * 86400 * 1'000'000);
  CHECK(s.checkpoint.save_us == 30'000'000);
  CHECK(s.faults.at(0).rate.component == Component::Gpu);
  CHECK(s.faults.at(0).action == Act::Replace);
  CHECK(s.content_hash.size() == 16);
  CHECK(s.unsaved_work_at_horizon_counts);  // the default convention
}

namespace {
//! A valid workload for the minimal fixture's 64 GPUs: TP 8 x PP 4 x DP 2.
json small_workload() {
  return {{"model", {{"layers", 8}, {"hidden", 1024}, {"heads", 8}, {"vocab", 32000}, {"seq_len", 2048}}},
          {"parallel", {{"tp", 8}, {"pp", 4}, {"global_batch", 16}}},
          {"efficiency", {{"gemm", 0.5}}},
          {"fabric", {{"nvlink", "300GB/s"}, {"nic", "200Gbps"}}}};
}
}  // namespace

TEST_CASE("a workload's efficiencies start from the preset fitted for its GPU and precision", "[scenario][workload]") {
  json doc = test::read_json(test::fixture("minimal.json"));  // an H100
  doc["job"].erase("step_time");
  doc["workload"] = small_workload();
  doc["workload"].erase("efficiency");
  doc["workload"]["precision"] = "fp8";
  const Scenario h100 = test::scenario_from(doc);
  CHECK(h100.workload->efficiency_preset == "h100-fp8");
  CHECK(h100.workload->workload.efficiency.gemm == 0.444);
  CHECK(h100.workload->workload.efficiency.tp_overlap == 0.740);

  // A field stated overrides the preset's; a named preset applies whatever the GPU.
  doc["cluster"]["gpu"]["model"] = "NVIDIA A100-SXM4-80GB";
  doc["workload"].erase("precision");
  doc["workload"]["efficiency"] = {{"bandwidth", 0.6}};
  const Scenario a100 = test::scenario_from(doc);
  CHECK(a100.workload->efficiency_preset == "a100-bf16");
  CHECK(a100.workload->workload.efficiency.gemm == 0.703);
  CHECK(a100.workload->workload.efficiency.bandwidth == 0.6);
  doc["workload"]["efficiency"] = {{"preset", "h100-fp8"}, {"gemm", 0.5}};
  const Scenario named = test::scenario_from(doc);
  CHECK(named.workload->efficiency_preset == "h100-fp8");
  CHECK(named.workload->workload.efficiency.gemm == 0.5);
  CHECK(named.workload->workload.efficiency.cp_overlap == 1);

  // Stated in full: no preset.
  doc["workload"]["efficiency"] = {{"gemm", 0.6}};
  CHECK(test::scenario_from(doc).workload->efficiency_preset.empty());

  // Presets are named by stack and GPU: another stack's is named, never chosen by the GPU alone;
  // the Megatron presets answer to their stack's name too.
  doc["cluster"]["gpu"]["model"] = "NVIDIA H100 80GB HBM3";
  doc["workload"].erase("efficiency");
  CHECK(test::scenario_from(doc).workload->efficiency_preset == "h100-bf16");
  doc["workload"]["efficiency"] = {{"preset", "pytorch-fsdp-h100-bf16"}};
  const Scenario fsdp = test::scenario_from(doc);
  CHECK(fsdp.workload->efficiency_preset == "pytorch-fsdp-h100-bf16");
  CHECK(fsdp.workload->workload.efficiency.gemm_half_hidden == 1337);  // its own table shows the width law
  CHECK(fsdp.workload->workload.efficiency.attention == 0.1703);
  doc["workload"]["efficiency"] = {{"preset", "nemo-h100-bf16"}};
  CHECK(test::scenario_from(doc).workload->efficiency_preset == "h100-bf16");
}

TEST_CASE("a workload lists the fields it left out that its layout depends on, with the values assumed", "[scenario][workload]") {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["job"].erase("step_time");
  doc["workload"] = small_workload();  // TP 8 x PP 4 x DP 2, the fabric's leaves not given
  std::map<std::string, std::string> assumed;
  const Scenario given = test::scenario_from(doc);
  for (const Assumption& a : given.workload->assumed) assumed[a.pointer] = a.value;
  CHECK(assumed.at("/workload/parallel/sequence_parallel") == "false");
  CHECK(assumed.at("/workload/parallel/virtual_stages") == "1");
  CHECK(assumed.at("/workload/parallel/rank_order") == "tp-cp-dp-pp");
  CHECK(assumed.at("/workload/parallel/embedding_as_layer") == "false");
  CHECK(assumed.at("/workload/model/kv_heads") == "8");
  CHECK(assumed.at("/workload/fabric/nodes_per_leaf") == "0");
  CHECK(assumed.count("/workload/parallel/cp_algorithm") == 0);  // no CP: nothing to assume
  CHECK(assumed.count("/workload/efficiency/preset") == 0);      // gemm stated

  // Stated fields leave the list, and stage sizes make the embedding/loss split moot.
  doc["workload"]["parallel"]["sequence_parallel"] = true;
  doc["workload"]["parallel"]["stage_layers"] = {2, 2, 2, 2};
  doc["workload"]["model"]["kv_heads"] = 8;
  assumed.clear();
  const Scenario stated = test::scenario_from(doc);
  for (const Assumption& a : stated.workload->assumed) assumed[a.pointer] = a.value;
  CHECK(assumed.count("/workload/parallel/sequence_parallel") == 0);
  CHECK(assumed.count("/workload/parallel/embedding_as_layer") == 0);
  CHECK(assumed.count("/workload/model/kv_heads") == 0);
  CHECK(assumed.count("/workload/parallel/virtual_stages") == 1);
}

TEST_CASE("each kind of bad input names its field and reason", "[scenario]") {
  struct Case {
    const char* what;
    std::function<void(json&)> mutate;
    const char* pointer;
    const char* reason;
  };
  const std::vector<Case> cases{
      {"unknown top-level field", [](json& d) { d["clustr"] = 1; }, "/clustr", "unknown field"},
      {"unknown horizon convention", [](json& d) { d["simulation"]["unsaved_work_at_horizon"] = "kept"; },
       "/simulation/unsaved_work_at_horizon", "one of: productive, lost"},
      {"unknown nested field", [](json& d) { d["faults"][0]["detecton"] = "1s"; }, "/faults/0/detecton", "unknown field"},
      {"missing schema version", [](json& d) { d.erase("schema_version"); }, "/schema_version", "add \"schema_version\": 1"},
      {"future schema version", [](json& d) { d["schema_version"] = 2; }, "/schema_version", "newer ctwin"},
      {"wrong type", [](json& d) { d["cluster"]["nodes"] = "ten"; }, "/cluster/nodes", "expected an integer"},
      {"negative count", [](json& d) { d["cluster"]["spare_nodes"] = -1; }, "/cluster/spare_nodes", "between 0"},
      {"number without a unit", [](json& d) { d["restart"]["overhead"] = 300; }, "/restart/overhead", "with a unit"},
      {"unknown restart mechanism", [](json& d) { d["restart"]["mechanism"] = "teleport"; }, "/restart/mechanism",
       "one of: relaunch, in_process, warm_standby"},
      {"in-process without its cost", [](json& d) { d["restart"]["mechanism"] = "in_process"; }, "/restart/in_process", "missing"},
      {"warm standby without its cost", [](json& d) { d["restart"]["mechanism"] = "warm_standby"; }, "/restart/warm_standby", "missing"},
      {"quorum without its reform", [](json& d) { d["policies"]["elastic"] = {{"mode", "quorum"}, {"replica_nodes", 1}, {"recover", "1min"}}; },
       "/policies/elastic/reform", "missing"},
      {"a reform outside a quorum", [](json& d) { d["policies"]["elastic"] = {{"mode", "shrink"}, {"replica_nodes", 1}, {"reform", "5s"}}; },
       "/policies/elastic/reform", "only a quorum"},
      {"in-process for a class that is not there", [](json& d) { d["restart"]["in_process"] = {{"overhead", "5s"}, {"faults", {"nope"}}}; },
       "/restart/in_process/faults/0", "no fault class is named \"nope\""},
      {"unknown unit", [](json& d) { d["checkpoint"]["save_time"] = "30 furlongs"; }, "/checkpoint/save_time", "unknown duration unit"},
      {"negative duration", [](json& d) { d["faults"][0]["detection"] = "-1s"; }, "/faults/0/detection", "negative"},
      {"zero interval", [](json& d) { d["policies"]["checkpoint"]["interval"] = "0s"; }, "/policies/checkpoint/interval", "longer than zero"},
      {"too many job nodes", [](json& d) { d["job"]["nodes"] = 9; }, "/job/nodes", "exceed the cluster"},
      {"bad rate unit", [](json& d) { d["faults"][0]["rate"] = "0.5/year"; }, "/faults/0/rate", "per component"},
      {"unknown effect", [](json& d) { d["faults"][0]["effect"] = "explode"; }, "/faults/0/effect", "one of: crash, hang, slow"},
      {"slow without factor", [](json& d) { d["faults"][0]["effect"] = "slow"; d["faults"][0]["recovery"]["action"] = "none"; },
       "/faults/0/speed_factor", "needs its speed factor"},
      {"impossible speed factor", [](json& d) { d["faults"][0]["effect"] = "slow"; d["faults"][0]["speed_factor"] = 1.5;
                                                d["faults"][0]["recovery"]["action"] = "none"; },
       "/faults/0/speed_factor", "must be below 1"},
      {"weibull without shape", [](json& d) { d["faults"][0]["distribution"] = "weibull"; }, "/faults/0/weibull_shape", "needs its shape"},
      {"shape on exponential", [](json& d) { d["faults"][0]["weibull_shape"] = 0.7; }, "/faults/0/weibull_shape", "only a \"weibull\""},
      {"crash with no action", [](json& d) { d["faults"][0]["recovery"]["action"] = "none"; }, "/faults/0/recovery/action", "brings the job back"},
      {"duplicate class", [](json& d) { d["faults"].push_back(d["faults"][0]); }, "/faults/1/name", "duplicate"},
      {"faults not an array", [](json& d) { d["faults"] = json::object(); }, "/faults", "expected an array"},
      {"both save time and size", [](json& d) { d["checkpoint"]["size_per_gpu"] = "1GiB"; }, "/checkpoint", "exactly one of"},
      {"size without storage", [](json& d) { d["checkpoint"] = {{"size_per_gpu", "1GiB"}, {"persist_bandwidth", "100Gbps"}}; },
       "/cluster/storage", "needs the storage system"},
      {"peer copies with no size to price them",
       [](json& d) {
         d["checkpoint"].update({{"mechanism", "flash"}, {"snapshot_time", "2s"}, {"memory_restore_time", "20s"}, {"peer_replicas", json::object()}});
       },
       "/checkpoint/peer_replicas/replication_time", "missing"},
      {"no efficiency fitted for the GPU",
       [](json& d) {
         d["cluster"]["gpu"]["model"] = "H200";
         d["workload"] = small_workload();
         d["workload"].erase("efficiency");
       },
       "/workload/efficiency", "no preset was fitted for GPU \"H200\" in bf16"},
      {"unknown efficiency preset",
       [](json& d) {
         d["workload"] = small_workload();
         d["workload"]["efficiency"] = {{"preset", "b200"}};
       },
       "/workload/efficiency/preset", "one of: a100-bf16, h100-fp8, h100-bf16"},
      {"unknown pipeline schedule",
       [](json& d) {
         d["workload"] = small_workload();
         d["workload"]["parallel"]["schedule"] = "zb_x";
       },
       "/workload/parallel/schedule", "one of: 1f1b, interleaved, flexible_interleaved, zb_h1, zb_v, dualpipe"},
      {"offload share above one",
       [](json& d) {
         d["workload"] = small_workload();
         d["workload"]["parallel"]["activation_offload"] = 1.5;
       },
       "/workload/parallel/activation_offload", "between 0 and 1"},
      {"contiguous micro-batches without the flexible schedule",
       [](json& d) {
         d["workload"] = small_workload();
         d["workload"]["parallel"]["contiguous_micro_batches"] = 2;
       },
       "/workload/parallel", "flexible_interleaved's"},
      {"two kinds of work", [](json& d) { d["job"]["steps"] = 1000; }, "/job", "exactly one of"},
      {"no work", [](json& d) { d["job"].erase("horizon"); }, "/job/horizon", "give the work"},
      {"replace without repair time", [](json& d) { d.erase("spares"); }, "/spares", "missing required object"},
      {"unknown policy", [](json& d) { d["policies"]["checkpoint"]["type"] = "optimal"; }, "/policies/checkpoint/type", "one of: fixed, young, daly, adaptive"},
      {"interval on a computed policy", [](json& d) { d["policies"]["checkpoint"]["type"] = "young"; }, "/policies/checkpoint/interval", "only a \"fixed\" policy"},
      {"xid key not a code", [](json& d) { d["policies"]["xid_actions"] = {{"seventy-nine", "replace"}}; },
       "/policies/xid_actions/seventy-nine", "an Xid code"},
      {"unknown xid action", [](json& d) { d["policies"]["xid_actions"] = {{"79", "pray"}}; }, "/policies/xid_actions/79", "one of: restart"},
      {"replicas that do not divide the job", [](json& d) { d["policies"]["elastic"] = {{"mode", "shrink"}, {"replica_nodes", 3}}; },
       "/policies/elastic/replica_nodes", "must divide"},
      {"more replicas kept than exist", [](json& d) { d["policies"]["elastic"] = {{"mode", "shrink"}, {"replica_nodes", 2}, {"min_replicas", 5}}; },
       "/policies/elastic/min_replicas", "only 4 replicas"},
      {"precheck without its duration", [](json& d) { d["policies"]["precheck"] = json::object(); }, "/policies/precheck/duration", "missing"},
      {"straggler policy without a window", [](json& d) { d["policies"]["stragglers"] = {{"evict", true}}; }, "/policies/stragglers/observe", "missing"},
      {"a loss-spike window too short for a baseline", [](json& d) { d["policies"]["loss_spike"] = {{"window", 2}}; },
       "/policies/loss_spike/window", "between 4"},
      {"a loss-spike threshold of zero", [](json& d) { d["policies"]["loss_spike"] = {{"z", 0}}; }, "/policies/loss_spike/z", "greater than 0"},
      {"workload on the wrong GPU count", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["dp"] = 4; },
       "/workload/parallel", "the job has 64"},
      {"tensor parallel across nodes", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["tp"] = 16;
                                                     d["workload"]["parallel"]["pp"] = 1; },
       "/workload/parallel", "tp must divide the GPUs per node"},
      {"key/value heads that split a query group", [](json& d) { d["workload"] = small_workload(); d["workload"]["model"]["kv_heads"] = 3; },
       "/workload/model/kv_heads", "must divide heads (8)"},
      {"key/value heads split across tensor ranks", [](json& d) { d["workload"] = small_workload(); d["workload"]["model"]["kv_heads"] = 4; },
       "/workload/parallel", "tp must divide kv_heads"},
      {"stage sizes that miss layers", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["stage_layers"] = {2, 2, 2, 1}; },
       "/workload/parallel", "stage_layers must add up to the layers"},
      {"a stage size that is no count", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["stage_layers"] = {2, 2, -2, 6}; },
       "/workload/parallel/stage_layers/2", "whole number of layers"},
      {"first and last stages that leave an uneven middle", [](json& d) { d["workload"] = small_workload();
                                                               d["workload"]["parallel"]["first_stage_layers"] = 1; },
       "/workload/parallel", "must split evenly over the other 3 stages"},
      {"a rank order that misses a dimension", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["rank_order"] = "tp-dp-pp"; },
       "/workload/parallel/rank_order", "must order tp, cp, dp and pp once each"},
      {"a rank order with ep last", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["rank_order"] = "tp-cp-dp-pp-ep"; },
       "/workload/parallel/rank_order", "\"ep\" only just before \"dp\""},
      {"an unknown context-parallel algorithm", [](json& d) { d["workload"] = small_workload(); d["workload"]["parallel"]["cp_algorithm"] = "a2a"; },
       "/workload/parallel/cp_algorithm", "unknown value \"a2a\""},
      {"a layout that does not fit in the GPU's memory", [](json& d) { d["workload"] = small_workload(); d["cluster"]["gpu"]["memory"] = "100MB"; },
       "/workload/parallel", "does not fit in GPU memory: stage 0 needs"},
      {"workload without its GEMM efficiency, on a GPU with no preset",
       [](json& d) {
         d["workload"] = small_workload();
         d["workload"]["efficiency"].erase("gemm");
         d["cluster"]["gpu"]["model"] = "H200";
       },
       "/workload/efficiency/gemm", "missing: no preset was fitted for GPU \"H200\""},
      {"elastic replica splitting a data-parallel replica",
       [](json& d) { d["workload"] = small_workload(); d["policies"]["elastic"] = {{"mode", "shrink"}, {"replica_nodes", 2}}; },
       "/policies/elastic/replica_nodes", "whole data-parallel replicas"},
      {"unknown all-reduce", [](json& d) { d["workload"] = small_workload(); d["workload"]["dp_algorithm"] = "butterfly"; },
       "/workload/dp_algorithm", "one of: ring, tree, hierarchical"},
      {"bandwidth share above 1", [](json& d) { d["workload"] = small_workload(); d["workload"]["efficiency"]["bandwidth"] = 2; },
       "/workload/efficiency/bandwidth", "at most 1"},
      {"negative half-efficiency width", [](json& d) { d["workload"] = small_workload(); d["workload"]["efficiency"]["gemm_half_hidden"] = -1; },
       "/workload/efficiency/gemm_half_hidden", "is a hidden size"},
      {"attention's half-length without attention", [](json& d) { d["workload"] = small_workload(); d["workload"]["efficiency"]["attention_half_seq"] = 2048; },
       "/workload/efficiency/attention_half_seq", "needs attention"},
      {"the backward's half-length without its efficiency", [](json& d) { d["workload"] = small_workload(); d["workload"]["efficiency"]["attention_backward_half_seq"] = 2048; },
       "/workload/efficiency/attention_backward_half_seq", "needs attention_backward"},
      {"the backward's efficiency over 1", [](json& d) { d["workload"] = small_workload(); d["workload"]["efficiency"]["attention_backward"] = 1.5; },
       "/workload/efficiency/attention_backward", "between 0 and 1"},
      {"zero trials", [](json& d) { d["simulation"]["trials"] = 0; }, "/simulation/trials", "between 1"},
      {"faults during recovery not a boolean", [](json& d) { d["simulation"]["faults_during_recovery"] = "no"; },
       "/simulation/faults_during_recovery", "expected true or false"},
      {"unknown repair distribution", [](json& d) { d["spares"] = {{"repair", {{"distribution", "weibull"}, {"mean", "1d"}}}}; },
       "/spares/repair/distribution", "one of: lognormal, exponential"},
      {"exponential repair with a median", [](json& d) { d["spares"] = {{"repair", {{"distribution", "exponential"}, {"mean", "1d"}, {"median", "1d"}}}}; },
       "/spares/repair/median", "only a mean"},
      {"exponential repair without its mean", [](json& d) { d["spares"] = {{"repair", {{"distribution", "exponential"}}}}; },
       "/spares/repair/mean", "missing"},
      {"cure probability above 1", [](json& d) { d["spares"]["lemons"] = {{"fraction", 0.1}, {"cure_probability", 1.5}}; },
       "/spares/lemons/cure_probability", "between 0 and 1"},
      {"exposed reduction longer than the reduction", [](json& d) { d["job"]["dp_reduction"] = {{"time", "1s"}, {"exposed", "2s"}}; },
       "/job/dp_reduction/exposed", "more than the whole reduction"},
      {"row remap on a class that is not Xid 48", [](json& d) { d["faults"][0]["remap"] = {{"spare_rows", 8}, {"replace_time", "2min"}}; },
       "/faults/0/remap", "give the class \"xid\": 48"},
      {"a double-bit error waiting for more", [](json& d) { d["faults"][0]["xid"] = 48; d["faults"][0]["remap"] = {{"spare_rows", 8}, {"replace_time", "2min"}, {"after", 3}}; },
       "/faults/0/remap/after", "asks for its remap at once"},
      {"row remap without its replace time", [](json& d) { d["faults"][0]["xid"] = 48; d["faults"][0]["remap"] = {{"spare_rows", 8}}; },
       "/faults/0/remap/replace_time", "missing"},
      {"reduction longer than the step", [](json& d) { d["job"]["dp_reduction"] = {{"time", "1h"}, {"exposed", "1s"}}; },
       "/job/dp_reduction/time", "longer than the step"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const auto problems = problems_after(c.mutate);
    REQUIRE_FALSE(problems.empty());
    CHECK(has(problems, c.pointer, c.reason));
  }
}

TEST_CASE("all problems are reported at once, one line each, with the file name", "[scenario]") {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"]["nodes"] = "ten";
  doc["faults"][0]["effect"] = "explode";
  doc["typo"] = true;
  try {
    test::scenario_from(doc, "my/scenario.json");
    FAIL("expected ScenarioInvalid");
  } catch (const ScenarioInvalid& e) {
    CHECK(e.problems().size() >= 3);
    const std::string text = e.what();
    CHECK(text.find("my/scenario.json: /cluster/nodes: expected an integer") != std::string::npos);
    CHECK(text.find("my/scenario.json: /faults/0/effect: unknown value \"explode\"") != std::string::npos);
    CHECK(text.find("my/scenario.json: /typo: unknown field") != std::string::npos);
  }
}

TEST_CASE("malformed JSON and missing files are reported against the file", "[scenario]") {
  CHECK_THROWS_WITH(parse_scenario("{\"schema_version\": 1,", "broken.json"), Catch::Contains("broken.json: /: not valid JSON"));
  CHECK_THROWS_WITH(load_scenario("/nonexistent/x.json"), Catch::Contains("/nonexistent/x.json: /: cannot open"));
}

TEST_CASE("a workload replaces the step time, without either the job is incomplete", "[scenario]") {
  CHECK(has(problems_after([](json& d) { d["job"].erase("step_time"); }), "/job/step_time", "or a workload"));
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["job"].erase("step_time");
  doc["workload"] = small_workload();
  const Scenario s = test::scenario_from(doc);
  REQUIRE(s.workload);
  CHECK(s.workload->workload.layout.dp == 2);  // the rest of the 64 GPUs
  CHECK(s.job.step_us == 0);                   // the step model fills it in
}

TEST_CASE("every scenario shipped in scenarios/ loads", "[scenario]") {
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::repo_file("scenarios"))) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(load_scenario(entry.path().string()));
    ++loaded;
  }
  CHECK(loaded >= 8);
  int policies = 0;  // policy files for `ctwin live run`
  for (const auto& entry : std::filesystem::directory_iterator(test::repo_file("scenarios/policies"))) {
    INFO(entry.path().string());
    CHECK_NOTHROW(load_policies_or_scenario(entry.path().string()));
    ++policies;
  }
  CHECK(policies >= 1);
}

TEST_CASE("a policy file is a scenario's policies section alone, problems name their pointer", "[scenario]") {
  const Scenario s = parse_policies_or_scenario(
      R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "5min"}, "xid_actions": {"79": "replace"}}})", "p.json");
  CHECK(s.xid_actions.at(79).action == Act::Replace);
  CHECK(s.checkpoint_policy.interval_us == 300 * kMicrosPerSecond);
  CHECK(s.loss_spike.window == 50);  // the defaults when the file says nothing
  CHECK(s.loss_spike.confirm == 8);
  const Scenario tuned = parse_policies_or_scenario(
      R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "5min"},
          "loss_spike": {"window": 200, "z": 8, "ratio": 2, "confirm": 16, "source": "a noisy MoE loss"}}})", "p.json");
  CHECK(tuned.loss_spike.window == 200);
  CHECK(tuned.loss_spike.z == 8);
  CHECK(tuned.loss_spike.ratio == 2);
  CHECK(tuned.loss_spike.confirm == 16);
  try {
    parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "5min"}, "xid_actions": {"x": "replace"}}, "extra": 1})", "p.json");
    FAIL("a bad policy file was accepted");
  } catch (const ScenarioInvalid& e) {
    const std::string what = e.what();
    CHECK(what.find("p.json: /policies/xid_actions/x:") != std::string::npos);
    CHECK(what.find("p.json: /extra:") != std::string::npos);
  }
  CHECK_THROWS_AS(parse_policies_or_scenario(R"({"schema_version": 1})", "p.json"), ScenarioInvalid);
}

TEST_CASE("hostile scenarios are bad input with a pointer, never a crash or a wrong forecast", "[scenario][hostile]") {
  auto problems_of = [](const std::string& text) {
    try {
      parse_scenario(text, "hostile.json");
    } catch (const ScenarioInvalid& e) {
      return e.problems();
    }
    return std::vector<ScenarioProblem>{};
  };
  // 100,000 levels of nesting once overflowed the stack.
  const auto deep = problems_of(std::string(100'000, '[') + std::string(100'000, ']'));
  REQUIRE(deep.size() == 1);
  CHECK(deep[0].reason.find("nested deeper than 64 levels") != std::string::npos);
  // A number beyond double's range once aborted with an uncaught exception: it is named by its field.
  json doc = test::read_json(test::fixture("minimal.json"));
  std::string text = doc.dump();
  text.replace(text.find("\"job\":{"), 7, "\"job\":{\"tokens_per_step\":1e400,");
  const auto overflow = problems_of(text);
  REQUIRE(overflow.size() == 1);
  CHECK(overflow[0].pointer == "/job/tokens_per_step");
  CHECK(overflow[0].reason.find("number overflow") != std::string::npos);
  // A file too large to be a scenario (a 100 MB fault list) is refused before it is parsed.
  const auto huge = problems_of(std::string(kLargestScenarioBytes + 1, ' '));
  REQUIRE(huge.size() == 1);
  CHECK(huge[0].reason.find("a scenario is at most 16 MiB") != std::string::npos);
}

TEST_CASE("a scenario file over the cap is refused by its size, before it is read", "[scenario][hostile]") {
  // A sparse file of 2 GiB: reading it first took seconds and gigabytes of memory.
  const auto path = std::filesystem::temp_directory_path() / ("ctwin-huge-" + std::to_string(::getpid()) + ".json");
  { std::ofstream touch(path); }
  std::filesystem::resize_file(path, std::uintmax_t(2) << 30);
  try {
    load_scenario(path.string());
    FAIL("a 2 GiB scenario loaded");
  } catch (const ScenarioInvalid& e) {
    CHECK(std::string(e.what()).find("is 2048 MiB: a scenario is at most 16 MiB") != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("what cannot be simulated is refused up front with the reason", "[scenario][hostile]") {
  // 1e6 per GPU-day: 1.9e9 episodes in 30 days on 64 GPUs, which ran until the allocator gave up.
  CHECK(has(problems_after([](json& d) { d["faults"][0]["rate"] = "1e6/gpu-day"; }), "/faults/0/rate", "check the rate's unit"));
  CHECK(problems_after([](json& d) { d["faults"][0]["rate"] = "10/gpu-day"; }).empty());
  // 1e20 bytes per GPU once "saved in 0 s" through a float-to-integer overflow.
  CHECK(has(problems_after([](json& d) {
              d["checkpoint"] = {{"size_per_gpu", "1e20B"}, {"persist_bandwidth", "400Gbps"}};
              d["cluster"]["storage"] = {{"servers", 4}, {"write_bandwidth", "20GB/s"}, {"read_bandwidth", "40GB/s"},
                                         {"network_bandwidth", "400Gbps"}};
            }),
            "/checkpoint/size_per_gpu", "more than a petabyte per GPU"));
  // The storage model once ran every node's writer (a million took 24 GB before the OOM killer);
  // it now runs one symmetric slice, so a million-node job's checkpoint size is accepted.
  CHECK(problems_after([](json& d) {
          d["cluster"]["nodes"] = 1'000'000;
          d["cluster"]["spare_nodes"] = 0;
          d["job"]["nodes"] = 1'000'000;
          d["faults"][0]["rate"] = "0.01/gpu-year";
          d["checkpoint"] = {{"size_per_gpu", "10GiB"}, {"persist_bandwidth", "400Gbps"}};
          d["cluster"]["storage"] = {{"servers", 4}, {"write_bandwidth", "20GB/s"}, {"read_bandwidth", "40GB/s"},
                                     {"network_bandwidth", "400Gbps"}};
        }).empty());
  // A slow fault of 1e-300 of full speed made a float-to-integer overflow of its wall time.
  CHECK(has(problems_after([](json& d) {
              d["faults"][0]["effect"] = "slow";
              d["faults"][0]["speed_factor"] = 1e-300;
            }),
            "/faults/0/speed_factor", "is a stall"));
  // Work beyond any simulation in steps, and a step from tokens that overflows.
  CHECK(has(problems_after([](json& d) {
              d["job"].erase("horizon");
              d["job"]["steps"] = 1e30;
            }),
            "/job/steps", "more work than any simulation"));
}

TEST_CASE("a shrunk job must fit in GPU memory too: ZeRO shards its states over fewer ranks", "[scenario][workload]") {
  // MegaScale's 175B on 256 A100s (TP 8 x PP 8 x DP 4, 80 GB): each of 4 elastic replicas is one
  // data-parallel replica. At one replica the optimizer states are not sharded at all. With an
  // unfused attention, which keeps every layer's scores, that no longer fits.
  json doc = test::read_json(test::repo_file("scenarios/megascale_175b.json"));
  doc["policies"]["elastic"] = {{"mode", "shrink"}, {"replica_nodes", 8}, {"min_replicas", 1}};
  doc["spares"] = {{"repair_time", "1h"}};
  CHECK_NOTHROW(test::scenario_from(doc, "shrunk.json"));  // flash attention: 71 GiB at one replica
  doc["workload"]["attention"] = "full";
  try {
    test::scenario_from(doc, "shrunk.json");
    FAIL("expected ScenarioInvalid");
  } catch (const ScenarioInvalid& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].pointer == "/policies/elastic/min_replicas");
    CHECK_THAT(e.problems()[0].reason, Catch::Contains("dp 1") && Catch::Contains("does not fit in GPU memory") &&
                                           Catch::Contains("the narrowest that fits is 3 replicas"));
  }
  doc["policies"]["elastic"]["min_replicas"] = 3;
  CHECK_NOTHROW(test::scenario_from(doc, "shrunk.json"));
}
