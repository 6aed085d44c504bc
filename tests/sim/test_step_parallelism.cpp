// The step model beyond TP/PP/DP: expert-parallel all-to-alls, context-parallel rings, a spine's
// lost bandwidth, and a shrunk job's speed at every data-parallel width.
#include <catch2/catch.hpp>

#include "policies/controller.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/step_cache.hpp"
#include "sim/step_model.hpp"
#include "support/step_fixtures.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;
using namespace ctwin::test;

namespace {

//! One GPU per node, so every collective crosses NICs and the closed forms are plain.
CommFabricSpec one_gpu_nodes() {
  CommFabricSpec f = a100_fabric();
  f.gpus_per_node = 1;
  return f;
}

Workload small_model() {
  Workload w;
  w.model.layers = 4;
  w.model.hidden = 4096;
  w.model.heads = 32;
  w.model.vocab = 32000;
  w.model.seq_len = 4096;
  w.layout.micro_batch = 1;
  w.efficiency.gemm = 0.5;
  w.gpu_peak_flops = 989e12;
  return w;
}

}  // namespace

TEST_CASE("an expert-parallel all-to-all sends (ep-1)/ep of the routed tokens through each NIC", "[step][collectives]") {
  Workload w = small_model();
  w.model.experts = 8;
  w.model.top_k = 2;
  w.layout.dp = 8;
  w.layout.ep = 8;
  w.layout.global_batch = 8;
  REQUIRE(check_layout(w, 1).empty());
  const WorkloadCosts c = workload_costs(w);
  CHECK(c.ep_bytes == Approx(4096.0 * 4096 * 2 * 2));  // tokens x hidden x bf16 x top_k
  CHECK(c.ep_collectives_per_layer == 4);  // dispatch and combine, forward and backward
  const CommFabricSpec f = one_gpu_nodes();
  const Collectives k = simulate_collectives(w, f, {}, AllReduceAlgorithm::Ring);
  REQUIRE_FALSE(k.hung);
  CHECK(k.ep_s == Approx(7.0 / 8 * c.ep_bytes / f.nic_bytes_per_s + 2 * f.nic_latency_s).epsilon(0.02));
  const StepBreakdown b = step_time(w, f, {});
  CHECK(b.ep_exposed_s == Approx(k.ep_s * c.ep_collectives_per_layer * w.model.layers * c.micro_batches));
  // A dead NIC in the expert group hangs the all-to-all, as NCCL would.
  StepState cut;
  cut.fabric.nic_factor[5] = 0;
  CHECK(step_time(w, f, cut).hung);
}

TEST_CASE("a context-parallel ring passes K/V chunks, and gradients reduce over data x context ranks", "[step][collectives]") {
  Workload w = small_model();
  w.layout.cp = 4;
  w.layout.dp = 2;
  w.layout.global_batch = 2;
  REQUIRE(check_layout(w, 1).empty());
  const WorkloadCosts c = workload_costs(w);
  CHECK(c.cp_bytes == Approx(2.0 * 4096 / 4 * 4096 * 2));  // K and V of a quarter of the sequence
  CHECK(c.cp_passes_per_layer == 3);                      // K/V forward, again backward, dK/dV back
  const CommFabricSpec f = one_gpu_nodes();
  const Collectives k = simulate_collectives(w, f, {}, AllReduceAlgorithm::Ring);
  CHECK(k.cp_s == Approx(c.cp_bytes / f.nic_bytes_per_s + 2 * f.nic_latency_s).epsilon(0.02));
  std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(k.dp_s == Approx(ring_all_reduce(f, {}, {all}, c.dp_bytes, 600).seconds).epsilon(1e-9));
  const StepBreakdown b = step_time(w, f, {});
  CHECK(b.step_s == Approx(b.compute_s + b.bubble_s + b.tp_exposed_s + b.pp_exposed_s + b.dp_exposed_s + b.ep_exposed_s +
                           b.cp_exposed_s));
  // Unhidden: (cp - 1) steps a pass, 3 passes a layer, 4 layers, each micro-batch.
  CHECK(b.cp_exposed_s == Approx(k.cp_s * 3 * 3 * 4 * c.micro_batches));
  // A ring step hides behind the attention of the chunk in hand (4 (s/cp)^2 h FLOPs forward), and no more.
  const double chunk_s = 4.0 * 1024 * 1024 * 4096 / (989e12 * 0.5);
  CHECK(c.cp_chunk_attention_s == Approx(chunk_s));
  REQUIRE(chunk_s < k.cp_s);
  Workload hidden = w;
  hidden.efficiency.cp_overlap = 1;
  CHECK(step_time(hidden, f, {}).cp_exposed_s == Approx((k.cp_s - chunk_s) * 3 * 3 * 4 * c.micro_batches));
  // All-gathered once a pass, the same traffic hides behind the whole pass's attention (cp chunks).
  Workload gathered = hidden;
  gathered.layout.cp_algorithm = CpAlgorithm::AllGather;
  CHECK(step_time(gathered, f, {}).cp_exposed_s == Approx((3 * k.cp_s - 4 * chunk_s) * 3 * 4 * c.micro_batches));
}

TEST_CASE("a spine's lost bandwidth slows collectives that cross leaves, as the uplinks' bottleneck predicts",
          "[step][collectives]") {
  CommFabricSpec f = a100_fabric();
  f.nodes_per_leaf = 4;  // 8 nodes: two leaves per rail, each with an uplink of 4 NICs
  std::vector<int> ring;
  for (int n = 0; n < 8; ++n) ring.push_back(n * 8);
  const double bytes = 4e9;
  const PhaseResult healthy = ring_all_reduce(f, {}, {ring}, bytes, 600);
  FabricState spine_down;
  spine_down.uplink_factor = 0.125;  // the uplink carries half of one NIC: the crossing flow takes twice as long
  const PhaseResult slowed = ring_all_reduce(f, spine_down, {ring}, bytes, 600);
  CHECK(slowed.seconds == Approx(2 * healthy.seconds).epsilon(0.02));
  spine_down.uplink_factor = 0.5;  // still above one NIC: no change
  CHECK(ring_all_reduce(f, spine_down, {ring}, bytes, 600).seconds == Approx(healthy.seconds).epsilon(1e-6));
}

TEST_CASE("a shrunk job keeps its global batch: its speed at each width, interpolated between anchors, matches the "
          "step model within 1%",
          "[step]") {
  const Workload w = gpt175b(1024, 768);  // 16 replicas of 64 GPUs
  WorkloadSpec spec{w, a100_fabric(), AllReduceAlgorithm::Ring, "", {}};
  StepCache cache("");
  std::vector<int> widths;
  for (int width = 2; width <= 16; ++width) widths.push_back(width);
  const std::vector<double> speeds = cache.speeds_at_widths(spec, widths, 4);
  CHECK(cache.simulated() == 4);
  const double full = step_time(w, spec.fabric, {}).tokens_per_s;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    StepState state;
    state.dp_width = widths[i];
    const double direct = step_time(w, spec.fabric, state).tokens_per_s / full;
    INFO("width " << widths[i]);
    CHECK(speeds[i] == Approx(direct).epsilon(0.01));
    // The bubble and the gradient reduction do not grow with the micro-batches: better than width / 16
    // where the batch splits evenly (elsewhere the replica with one more micro-batch sets the pace).
    if (768 % widths[i] == 0 && widths[i] < 16) CHECK(speeds[i] > widths[i] / 16.0);
    if (i > 0) CHECK(speeds[i] >= speeds[i - 1]);
  }
  CHECK(speeds.back() == Approx(1.0));
}

TEST_CASE("with a workload, the elastic policy's shrunk speeds come from the step model", "[step]") {
  nlohmann::json doc = read_json(repo_file("scenarios/megascale_175b.json"));
  const int nodes = doc["job"]["nodes"];
  doc["policies"]["elastic"] = {{"mode", "shrink"}, {"replica_nodes", nodes / 4}, {"min_replicas", 2}};
  doc["cluster"]["gpu"].erase("memory");  // at 2 of 4 replicas the unsharded states would not fit in 80 GB
  Scenario s = scenario_from(doc);
  resolve_step_time(s, "megascale_175b.json");
  const auto& speeds = s.elastic.speed_by_replicas;
  REQUIRE(speeds.size() == 5);
  CHECK(speeds[1] == 0);  // below min_replicas: never runs
  CHECK(speeds[2] > 0.5);
  CHECK(speeds[3] > 0.75);
  CHECK(speeds[4] == Approx(1.0));
  control::ClusterView view;
  view.total_replicas = 4;
  view.speed_by_replicas = speeds;
  CHECK(view.speed_at(2) == speeds[2]);
  view.speed_by_replicas = {};
  CHECK(view.speed_at(2) == 0.5);
}

TEST_CASE("both drivers run a shrinking MoE job at the step model's speeds, and the ledger adds up", "[step][engines]") {
  nlohmann::json doc = read_json(repo_file("scenarios/moe_8x22b_ep.json"));
  doc["faults"][0]["rate"] = "2/gpu-year";  // enough faults in a fortnight to shrink
  Scenario scenario = scenario_from(doc);
  resolve_step_time(scenario, "moe_8x22b_ep.json");
  REQUIRE(scenario.elastic.speed_by_replicas.size() == 5);
  const RunResult native = run_trials(scenario, run_options(4, 9));
  const RunResult simgrid = run_trials(scenario, run_options(4, 9, 2, EngineKind::Simgrid));
  require_same_trials(native, simgrid);
  Micros shrunk = 0;
  for (const auto& t : native.trials) {
    CHECK(t.ledger.total() == t.wall_us);
    shrunk += t.ledger[Category::Shrunk];
  }
  CHECK(shrunk > 0);
}

TEST_CASE("grouped-query attention shrinks the K/V projections and the context-parallel ring, not the scores", "[step][collectives]") {
  Workload mha = small_model();
  mha.layout.cp = 4;
  mha.layout.dp = 2;
  mha.layout.global_batch = 2;
  Workload gqa = mha;
  gqa.model.kv_heads = 8;  // four query heads a key/value head
  REQUIRE(check_layout(gqa, 1).empty());
  const WorkloadCosts a = workload_costs(mha), g = workload_costs(gqa);
  const double h = 4096, l = 4;
  // K and V go from h x h to h x h/4: 1.5 h^2 fewer parameters a layer.
  CHECK(a.parameters - g.parameters == Approx(1.5 * h * h * l));
  // Model FLOPs lose 6 x those; the attention scores (12 s h l) stay.
  CHECK(a.model_flops_per_token - g.model_flops_per_token == Approx(6 * 1.5 * h * h * l));
  CHECK(g.cp_bytes == Approx(a.cp_bytes / 4));
  const CommFabricSpec f = one_gpu_nodes();
  CHECK(step_time(gqa, f, {}).cp_exposed_s < step_time(mha, f, {}).cp_exposed_s);
  // Whole key/value heads on each tensor rank.
  Workload split = gqa;
  split.model.kv_heads = 2;
  split.layout.tp = 4;
  split.layout.dp = 1;
  split.layout.cp = 2;
  split.layout.global_batch = 1;
  CHECK(check_layout(split, 4).find("tp must divide kv_heads") != std::string::npos);
}
