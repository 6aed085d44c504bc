// Step time from the fabric: collectives as SimGrid flows against their closed forms, and a
// step's response to a slow GPU, a degraded port, a dead one and a shrunk data-parallel width.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdio>
#include <tuple>

#include "models/workload.hpp"
#include "sim/step_cache.hpp"
#include "sim/step_model.hpp"
#include "support/step_fixtures.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using namespace ctwin::test;

namespace {

std::string test_fixture_minimal() { return std::string(CTWIN_TEST_DIR) + "/scenarios/minimal.json"; }

std::vector<std::vector<int>> one_gpu_per_node(int nodes) {
  std::vector<int> g;
  for (int n = 0; n < nodes; ++n) g.push_back(n * 8);
  return {g};
}

}  // namespace

TEST_CASE("model FLOPs per token follow Megatron-LM's formula, and MegaScale's MFU follows from them", "[step]") {
  const WorkloadCosts c = workload_costs(gpt175b(256, 768));
  CHECK(c.active_parameters / 1e9 == Approx(174.7).epsilon(0.01));
  CHECK(c.model_flops_per_token == Approx(6 * c.active_parameters + 12.0 * 2048 * 12288 * 96));
  // MegaScale Table 2, Megatron-LM at 256 GPUs: 40.0 s per step is 53.0% MFU.
  CHECK(c.model_flops_per_token * c.tokens_per_step / (40.0 * 256 * 312e12) == Approx(0.530).epsilon(0.01));
  CHECK(c.micro_batches == 192);
  REQUIRE(c.stages.size() == 8);
  CHECK(c.stages.front().layers == 12);
  // The output layer (6·V·h a token) runs on the last stage only.
  CHECK(c.stages.back().compute_s / c.stages.front().compute_s ==
        Approx(1 + 6.0 * 64000 * 12288 / ((c.hardware_flops_per_token - 6.0 * 64000 * 12288) / 8)));
  CHECK(check_layout(gpt175b(256, 768), 8).empty());
  Workload bad = gpt175b(256, 768);
  bad.layout.tp = 3;
  CHECK_FALSE(check_layout(bad, 8).empty());
}

TEST_CASE("a ring all-reduce takes 2(p-1)/p S/B plus its latency terms", "[step][collectives]") {
  const CommFabricSpec f = a100_fabric();
  for (int p : {2, 4, 16}) {
    const double bytes = 1e9;
    const PhaseResult r = ring_all_reduce(f, {}, one_gpu_per_node(p), bytes, 600);
    REQUIRE_FALSE(r.hung);
    const double expected = 2.0 * (p - 1) / p * bytes / f.nic_bytes_per_s + 2.0 * (p - 1) * 2 * f.nic_latency_s;
    INFO("p = " << p);
    CHECK(r.seconds == Approx(expected).epsilon(0.02));
  }
}

TEST_CASE("with NVLink inside nodes, the hierarchical all-reduce beats the flat ring", "[step][collectives]") {
  const CommFabricSpec f = a100_fabric();
  std::vector<int> all;
  for (int gpu = 0; gpu < 32; ++gpu) all.push_back(gpu);
  const PhaseResult flat = ring_all_reduce(f, {}, {all}, 1e9, 600);
  const PhaseResult hierarchical = hierarchical_all_reduce(f, {}, {all}, 1e9, 600);
  CHECK(hierarchical.seconds < flat.seconds / 2);
}

TEST_CASE("one port at half bandwidth slows a ring as its bottleneck predicts", "[step][collectives]") {
  const CommFabricSpec f = a100_fabric();
  const PhaseResult healthy = ring_all_reduce(f, {}, one_gpu_per_node(8), 1e9, 600);
  FabricState half;
  half.nic_factor[3 * 8] = 0.5;  // node 3's NIC on rail 0
  const PhaseResult slowed = ring_all_reduce(f, half, one_gpu_per_node(8), 1e9, 600);
  // Every phase waits for the flows through the slow port: twice the bandwidth term.
  const double latency = 2.0 * 7 * 2 * f.nic_latency_s;
  CHECK(slowed.seconds - latency == Approx(2 * (healthy.seconds - latency)).epsilon(0.02));
}

TEST_CASE("a step: a slow GPU stretches compute, a dead port hangs it, a shrunk job takes longer", "[step]") {
  const CommFabricSpec f = a100_fabric();
  const Workload w = gpt175b(512, 768);
  const StepBreakdown healthy = step_time(w, f, {});
  REQUIRE_FALSE(healthy.hung);
  CHECK(healthy.step_s == Approx(healthy.compute_s + healthy.bubble_s + healthy.tp_exposed_s + healthy.pp_exposed_s +
                                 healthy.dp_exposed_s));
  CHECK(healthy.mfu > 0.3);
  CHECK(healthy.mfu < 0.6);

  StepState slow;
  slow.gpu_speed[77] = 0.9;
  const StepBreakdown slowed = step_time(w, f, slow);
  CHECK(slowed.compute_s == Approx(healthy.compute_s / 0.9));

  StepState cut;
  cut.fabric.nic_factor[8 * 9 + 2] = 0;  // a NIC on a data-parallel ring
  cut.timeout_s = 1800;
  const StepBreakdown hung = step_time(w, f, cut);
  CHECK(hung.hung);
  CHECK(hung.step_s == 1800);

  StepState degraded;
  degraded.fabric.nic_factor[8 * 9 + 2] = 0.25;
  const StepBreakdown rail2 = step_time(w, f, degraded);
  CHECK(rail2.dp_collective_s > healthy.dp_collective_s * 2);
  StepState on_rail0;  // the same port on rail 0, the rail that stands for the healthy ones
  on_rail0.fabric.nic_factor[8 * 9] = 0.25;
  CHECK(step_time(w, f, on_rail0).dp_collective_s == Approx(rail2.dp_collective_s).epsilon(1e-9));

  StepState shrunk;
  shrunk.dp_width = 4;  // 4 of 8 replicas, same global batch
  const StepBreakdown half = step_time(w, f, shrunk);
  CHECK(half.compute_s == Approx(2 * healthy.compute_s));
  CHECK(half.tokens_per_s < 0.55 * healthy.tokens_per_s);
}

TEST_CASE("a ring across leaves runs at the uplink's share when the fabric is oversubscribed", "[step][collectives]") {
  CommFabricSpec f = a100_fabric();
  f.nodes_per_leaf = 4;
  const PhaseResult full = ring_all_reduce(f, {}, one_gpu_per_node(8), 1e9, 600);
  f.oversubscription = 8;  // the uplink of 4 NICs carries half of one NIC
  const PhaseResult oversubscribed = ring_all_reduce(f, {}, one_gpu_per_node(8), 1e9, 600);
  CHECK(oversubscribed.seconds == Approx(2 * full.seconds).epsilon(0.03));
}

TEST_CASE("ctwin step prints the breakdown, and a run takes its step time from the workload", "[step][cli][process]") {
  const std::string scenario = std::string(CTWIN_TEST_DIR) + "/../scenarios/megascale_175b.json";
  auto run = [](const std::string& args) { return test::run_ctwin(args); };
  auto [code, out] = run("step " + scenario);
  CHECK(code == 0);
  const auto at = out.find("step time");
  REQUIRE(at != std::string::npos);
  CHECK(std::stod(out.substr(at + 9)) == Approx(40.0).epsilon(0.001));  // MegaScale's Megatron-LM row: 40.0 s
  CHECK(out.find("pipeline bubble") != std::string::npos);
  std::tie(code, out) = run("step " + scenario + " --nic 74=0");
  CHECK(code == 0);
  CHECK(out.find("HUNG") != std::string::npos);
  std::tie(code, out) = run("step " + scenario + " --nic 74=2");
  CHECK(code == 2);
  std::tie(code, out) = run("step " + test_fixture_minimal());
  CHECK(code == 2);
  CHECK(out.find("/workload: missing") != std::string::npos);
  std::tie(code, out) = run("run " + scenario + " --trials 4");
  CHECK(code == 0);
  CHECK(out.find("tokens per day") != std::string::npos);
}

TEST_CASE("with a workload, a slow GPU's factor becomes the job's speed the step model gives", "[step]") {
  nlohmann::json doc = test::read_json(std::string(CTWIN_TEST_DIR) + "/../scenarios/megascale_175b.json");
  doc["faults"].push_back({{"name", "gpu_slow"}, {"rate", "1/gpu-year"}, {"effect", "slow"}, {"speed_factor", 0.5},
                           {"detection", "1h"}, {"recovery", {{"action", "none"}, {"duration", "1h"}}}});
  Scenario s = test::scenario_from(doc);
  resolve_step_time(s, "megascale_175b.json");
  const WorkloadSpec& w = *s.workload;
  StepState slow;
  slow.gpu_speed[0] = 0.5;
  const double expected = step_time(w.workload, w.fabric, {}).step_s / step_time(w.workload, w.fabric, slow).step_s;
  CHECK(s.faults.back().speed_factor == Approx(expected).epsilon(1e-9));
  CHECK(s.faults.back().speed_factor > 0.5);  // communication does not slow down with the GPU
  CHECK(s.faults.back().speed_factor < 0.6);   // about a quarter of this step is exposed communication
}

TEST_CASE("the double binary tree: log p latency for small messages, about a ring's time for large ones",
          "[step][collectives]") {
  const CommFabricSpec f = a100_fabric();
  const auto group = one_gpu_per_node(64);
  const PhaseResult ring_small = ring_all_reduce(f, {}, group, 1024, 600);
  const PhaseResult tree_small = tree_all_reduce(f, {}, group, 1024, 600);
  CHECK(tree_small.seconds < ring_small.seconds / 5);  // 2 x 6 hops against 2 x 63 phases
  const PhaseResult ring_large = ring_all_reduce(f, {}, group, 4e9, 600);
  const PhaseResult tree_large = tree_all_reduce(f, {}, group, 4e9, 600);
  // Each NIC carries a chunk up and down in both trees: about 2 S / B, like the ring.
  CHECK(tree_large.seconds == Approx(2 * 4e9 / f.nic_bytes_per_s).epsilon(0.25));
  CHECK(tree_large.seconds == Approx(ring_large.seconds).epsilon(0.25));
}

TEST_CASE("ZeRO-3: per layer, two parameter gathers and a gradient reduce-scatter each micro-batch, hidden behind compute when the fabric keeps up", "[step][zero]") {
  // Llama 3 8B's shape, pure FSDP over 64 A100s: 32 units, one micro-batch each.
  Workload w;
  w.model = {.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .ffn_hidden = 14336, .gated_mlp = true, .vocab = 128256, .seq_len = 8192};
  w.layout.dp = 64;
  w.layout.global_batch = 64;
  w.layout.zero_stage = 3;
  w.efficiency.gemm = 0.7;
  w.gpu_peak_flops = 312e12;
  const WorkloadCosts c = workload_costs(w);
  REQUIRE(c.fsdp_units == 32);
  // A unit is a layer and its share of the embedding and the output layer, in bf16.
  CHECK(c.dp_bytes == Approx((c.stages[0].parameters) * 2 / 32));
  CommFabricSpec fast = a100_fabric();
  fast.nic_bytes_per_s = 100e9;
  const StepBreakdown b = step_time(w, fast, {});
  // All-gather and reduce-scatter are each half a ring all-reduce: per step 32 x (2 + 1) halves.
  CHECK(b.dp_traffic_s == Approx(32 * 1.5 * b.dp_collective_s));
  // Each gather hides behind the unit before it: only the first one waits.
  CHECK(b.dp_exposed_s == Approx(b.dp_collective_s / 2));
  // A fabric ten times slower outlasts the compute: the rest shows.
  CommFabricSpec slow = fast;
  slow.nic_bytes_per_s = 5e9;
  const StepBreakdown s = step_time(w, slow, {});
  CHECK(s.dp_exposed_s > 10 * b.dp_exposed_s);
  CHECK(s.step_s - s.dp_exposed_s == Approx(b.step_s - b.dp_exposed_s));  // the compute is the same
  // ZeRO-1 on the same fabric: one gradient all-reduce a step, its traffic what it takes.
  w.layout.zero_stage = 1;
  const StepBreakdown z1 = step_time(w, fast, {});
  CHECK(z1.dp_traffic_s == z1.dp_collective_s);
  CHECK(workload_costs(w).fsdp_units == 0);
}

TEST_CASE("with a workload, a stated step stands and the model's is kept beside it, labelled in the report", "[step]") {
  nlohmann::json doc = test::read_json(std::string(CTWIN_TEST_DIR) + "/../scenarios/megascale_175b.json");
  Scenario modelled = test::scenario_from(doc);
  resolve_step_time(modelled, "megascale_175b.json");
  CHECK(modelled.job.step_modelled());
  CHECK(modelled.job.modelled_step_us == modelled.job.step_us);
  doc["job"]["step_time"] = "20s";  // a published step the model does not reproduce
  Scenario stated = test::scenario_from(doc);
  resolve_step_time(stated, "megascale_175b.json");
  CHECK_FALSE(stated.job.step_modelled());
  CHECK(stated.job.step_us == 20'000'000);
  CHECK(stated.job.modelled_step_us == modelled.job.modelled_step_us);
  // Without a workload the step is stated and nothing is modelled.
  const Scenario plain = test::scenario_from(test::read_json(test::fixture("minimal.json")));
  CHECK_FALSE(plain.job.step_modelled());
  CHECK(plain.job.modelled_step_us == 0);
}
