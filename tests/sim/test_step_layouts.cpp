// The layouts of today's largest dense runs: uneven pipeline stages with the embedding and the
// output layer on their own stages, sequence-parallel stage sends, and the order of the rank grid.
#include <catch2/catch.hpp>

#include "models/memory.hpp"
#include "models/workload.hpp"
#include "sim/step_model.hpp"
#include "support/step_fixtures.hpp"

using namespace ctwin;
using namespace ctwin::test;

namespace {
//! Llama 3 405B on its 16 stages: one layer fewer on the first and the last.
Workload llama405b_on_16_stages() {
  Workload w = llama405b();
  w.layout.stage_layers.assign(16, 8);
  w.layout.stage_layers.front() = w.layout.stage_layers.back() = 7;
  return w;
}
}  // namespace

TEST_CASE("126 layers on 16 stages: refused evenly, placed with lighter first and last stages", "[step][layout]") {
  Workload w = llama405b();
  CHECK(check_layout(w, 8).find("pp must divide the layers") != std::string::npos);
  // Llama 3: one layer fewer on the first and the last stage, which hold the embedding and the output layer.
  w.layout.stage_layers.assign(16, 8);
  w.layout.stage_layers.front() = 7;
  w.layout.stage_layers.back() = 7;
  REQUIRE(check_layout(w, 8).empty());
  const WorkloadCosts c = workload_costs(w);
  REQUIRE(c.stages.size() == 16);
  const double per_layer = c.stages[1].compute_s / 8;
  CHECK(c.stages.front().compute_s == Approx(7 * per_layer));
  // The last stage's output layer: 6·V·h FLOPs a token against a layer's.
  const double output = c.stages.back().compute_s - 7 * per_layer;
  CHECK(output > 0.5 * per_layer);  // 6·V·h = 12.6 GFLOP against a layer's 20.7
  CHECK(output < 0.7 * per_layer);
  // The embedding and the output layer add V·h/tp parameters to the first and the last stage.
  CHECK(c.stages.front().parameters - 7.0 / 8 * c.stages[1].parameters == Approx(128256.0 * 16384 / 8));
  // Megatron's accounting counts them as one layer each: 126 + 2 = 128 = 16 x 8.
  Workload counted = llama405b();
  counted.layout.embedding_as_layer = true;
  counted.layout.loss_as_layer = true;
  REQUIRE(check_layout(counted, 8).empty());
  CHECK(stage_layers(counted) == w.layout.stage_layers);
  // Interleaving cuts the counted units: 16 a stage in 8 chunks of 2, the embedding and the loss
  // filling one slot of the first and the last chunk (Megatron-Bridge's 405B layout on PP 8, VP 8).
  counted.layout.pp = 8;
  counted.layout.virtual_stages = 8;
  CHECK(check_layout(counted, 8).empty());
  CHECK(stage_layers(counted).front() == 15);
  counted.layout.virtual_stages = 3;
  CHECK(check_layout(counted, 8).find("virtual_stages must divide every stage's layers (the embedding") != std::string::npos);
  // An explicit layout may cut a stage into unequal chunks (Megatron-Bridge's Llama 3 70B on PP 8 x
  // VP 5: "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL" puts 11 layers on stage 3 and 9 on the last).
  Workload chunks = llama405b();
  chunks.model.layers = 80;
  chunks.layout.pp = 8;
  chunks.layout.virtual_stages = 5;
  chunks.layout.stage_layers = {10, 10, 10, 11, 10, 10, 10, 9};
  CHECK(check_layout(chunks, 8).empty());
  Workload bad = w;
  bad.layout.stage_layers.back() = 8;
  CHECK(check_layout(bad, 8).find("add up to the layers") != std::string::npos);
}

TEST_CASE("with uneven stages the slowest stage paces the step and the others make the bubble", "[step][layout]") {
  const CommFabricSpec f = a100_fabric();
  Workload even = gpt175b(256, 768);
  Workload uneven = even;
  uneven.layout.stage_layers = {11, 12, 12, 12, 12, 12, 12, 13};
  REQUIRE(check_layout(uneven, 8).empty());
  const StepBreakdown a = step_time(even, f, {}), b = step_time(uneven, f, {});
  const WorkloadCosts c = workload_costs(uneven);
  // The 13-layer stage carries the output layer too: it sets the steady state.
  CHECK(b.compute_s == Approx(c.stages.back().compute_s * c.micro_batches));
  CHECK(b.step_s > a.step_s);
  CHECK(b.step_s == Approx(b.compute_s + b.bubble_s + b.tp_exposed_s + b.pp_exposed_s + b.dp_exposed_s + b.ep_exposed_s + b.cp_exposed_s));
  // The bubble is one micro-batch of every other stage, communication included.
  double others = 0;
  for (std::size_t i = 0; i + 1 < c.stages.size(); ++i) others += c.stages[i].compute_s + c.stages[i].layers * b.tp_exposed_s / (13 * c.micro_batches);
  CHECK(b.bubble_s == Approx(others));
}

TEST_CASE("sequence-parallel stage sends move 1/tp of the activation from each tensor rank", "[step][layout]") {
  const CommFabricSpec f = a100_fabric();
  Workload full = gpt175b(256, 768);
  Workload sp = full;
  sp.layout.sequence_parallel = true;
  const WorkloadCosts a = workload_costs(full), b = workload_costs(sp);
  CHECK(b.pp_bytes == Approx(a.pp_bytes / 8));
  const Collectives ka = simulate_collectives(full, f, {}, AllReduceAlgorithm::Ring);
  const Collectives kb = simulate_collectives(sp, f, {}, AllReduceAlgorithm::Ring);
  // Each GPU's NIC carries its own tensor rank's share: an eighth of the bandwidth term.
  CHECK(kb.pp_s - f.nic_latency_s * 2 == Approx((ka.pp_s - f.nic_latency_s * 2) / 8).epsilon(0.05));
}

TEST_CASE("the rank order decides which groups share a node", "[step][layout]") {
  // TP 2 x DP 4 on nodes of 4 GPUs. Megatron's order puts two tensor groups of the same stage in a
  // node; data-fastest keeps the tensor pairs apart, and the DP ring runs on NVLink instead.
  CommFabricSpec f = a100_fabric();
  f.gpus_per_node = 4;
  Workload w = gpt175b(8, 8);
  w.layout.tp = 1;
  w.layout.pp = 2;
  w.layout.dp = 4;
  w.model.layers = 8;
  w.layout.global_batch = 8;
  REQUIRE(check_layout(w, 4).empty());
  Workload data_first = w;
  data_first.layout.rank_order = {RankDim::Data, RankDim::Tensor, RankDim::Context, RankDim::Pipeline};
  Workload stage_first = w;
  stage_first.layout.rank_order = {RankDim::Tensor, RankDim::Pipeline, RankDim::Context, RankDim::Data};
  REQUIRE(check_layout(data_first, 4).empty());
  const Collectives megatron = simulate_collectives(w, f, {}, AllReduceAlgorithm::Ring);
  const Collectives stage = simulate_collectives(stage_first, f, {}, AllReduceAlgorithm::Ring);
  // Megatron's order (tensor, context, data, pipeline): a stage's 4 data ranks fill one node, the
  // pipeline crosses nodes. Pipeline-before-data: the stage pairs share a node, the DP ring crosses.
  CHECK(megatron.dp_s < stage.dp_s / 3);
  CHECK(stage.pp_s < megatron.pp_s / 3);
  // A tensor group spread over nodes is refused.
  Workload spread = gpt175b(16, 16);
  spread.layout.tp = 2;
  spread.layout.pp = 1;
  spread.layout.dp = 8;
  spread.model.layers = 8;
  spread.layout.global_batch = 16;
  spread.layout.rank_order = {RankDim::Data, RankDim::Tensor, RankDim::Context, RankDim::Pipeline};
  CHECK(check_layout(spread, 4).find("spreads a tensor-parallel group") != std::string::npos);
}

TEST_CASE("FP8 training runs the layers' GEMMs at the FP8 peak and the attention core in bf16", "[step][layout]") {
  Workload bf16 = gpt175b(256, 768);
  Workload fp8 = bf16;
  fp8.gemm_peak_flops = 2 * bf16.gpu_peak_flops;
  const WorkloadCosts a = workload_costs(bf16), b = workload_costs(fp8);
  const double s = 2048, h = 12288;
  // Per token of a layer: 6 x 12h^2 GEMM FLOPs halve their time; the attention core's do not
  // (12·s·h, of which a flash kernel runs the causal half).
  const double gemm = 6 * 12 * h * h, core = 12 * s * h / 2;
  CHECK(b.stages[1].compute_s / a.stages[1].compute_s == Approx((gemm / 2 + core) / (gemm + core)));
  CHECK(b.model_flops_per_token == a.model_flops_per_token);  // MFU still counts against the bf16 peak
}

TEST_CASE("a flash kernel does half the causal attention core and keeps no scores", "[step][layout]") {
  Workload flash = gpt175b(256, 768);  // no recomputation
  REQUIRE(flash.layout.recompute == Recompute::None);
  Workload full = flash;
  full.attention = AttentionKernel::Full;
  const WorkloadCosts f = workload_costs(flash), u = workload_costs(full);
  const double s = flash.model.seq_len, h = flash.model.hidden, l = flash.model.layers;
  // MFU's count is the same; the GPUs skip the masked half of 12·s·h a layer.
  CHECK(f.model_flops_per_token == u.model_flops_per_token);
  CHECK(u.hardware_flops_per_token - f.hardware_flops_per_token == Approx(6 * s * h * l));
  CHECK(f.stages[0].compute_s < u.stages[0].compute_s);
  CHECK(step_time(flash, a100_fabric(), {}).step_s < step_time(full, a100_fabric(), {}).step_s);
  // Without recomputation an unfused attention stores 5·a·s²·b/t bytes a layer; a flash kernel none.
  const MemoryUse mf = memory_per_gpu(flash), mu = memory_per_gpu(full);
  const double scores = 5.0 * flash.model.heads * s * s / flash.layout.tp;
  const double in_flight = flash.layout.pp;  // stage 0 holds pp micro-batches (m >= pp)
  CHECK(mu.activations - mf.activations == Approx(scores * 12 * in_flight));
  // Selective recomputation drops them either way.
  flash.layout.recompute = full.layout.recompute = Recompute::Selective;
  CHECK(memory_per_gpu(flash).activations == Approx(memory_per_gpu(full).activations));
}

TEST_CASE("GEMM efficiency by hidden size: gemm x h / (h + h_half), the same at every size when h_half is 0", "[step][layout]") {
  Workload w = llama405b_on_16_stages();
  const double flat = workload_costs(w).stages[1].compute_s;
  w.efficiency.gemm_half_hidden = 16384;  // at h = h_half, half of gemm: twice the time
  CHECK(workload_costs(w).stages[1].compute_s == Approx(2 * flat));
  w.efficiency.gemm_half_hidden = 1723;   // fitted on MosaicML's MPT rows (bench/fit_gemm_law.py)
  CHECK(workload_costs(w).stages[1].compute_s == Approx(flat * (16384.0 + 1723) / 16384));
  // A model a quarter as wide loses four times as much to the same law.
  Workload small = w;
  small.model.hidden = 4096;
  small.model.heads = 32;
  const double small_flat = [&] { Workload x = small; x.efficiency.gemm_half_hidden = 0; return workload_costs(x).stages[1].compute_s; }();
  CHECK(workload_costs(small).stages[1].compute_s / small_flat - 1 == Approx(4 * (1723.0 / 16384)));
}

TEST_CASE("the attention core at its own efficiency, rising with the chunk of sequence a kernel sees", "[step][layout]") {
  Workload w = llama405b_on_16_stages();
  w.efficiency.gemm = 0.5;
  const double base = workload_costs(w).stages[1].compute_s;
  // As the layers (0): unchanged. At the layers' own efficiency: unchanged too.
  w.efficiency.attention = 0.5;
  CHECK(workload_costs(w).stages[1].compute_s == Approx(base));
  // At a quarter of peak the attention core takes twice as long; the products do not change.
  w.efficiency.attention = 0.25;
  const double slower = workload_costs(w).stages[1].compute_s;
  w.efficiency.attention = 0.125;
  const double slowest = workload_costs(w).stages[1].compute_s;
  const double attention_part = slower - base;  // the core at 0.25 minus at 0.5: its time at 0.5
  CHECK(attention_part > 0);
  CHECK(slowest - slower == Approx(2 * attention_part));
  // Half efficiency at a chunk of 8,192 tokens: the same as halving it.
  w.efficiency.attention = 0.25;
  w.efficiency.attention_half_seq = 8192;
  CHECK(workload_costs(w).stages[1].compute_s == Approx(slowest));
  // Context parallelism halves the chunk a kernel sees: the core runs slower still.
  w.layout.cp = 2;
  w.layout.dp = 1;
  const double chunked = workload_costs(w).stages[1].compute_s * 2;  // per GPU: half the tokens
  w.efficiency.attention_half_seq = 0;
  CHECK(chunked > workload_costs(w).stages[1].compute_s * 2);
}

TEST_CASE("scale-out traffic: only transfers between nodes count, each kind by its share of pairs across nodes", "[step][layout]") {
  const CommFabricSpec f = a100_fabric();
  // TP 8 fills a node: every data-parallel neighbour and every next stage is on another node.
  const Workload full = gpt175b(256, 768);
  const StepBreakdown b = step_time(full, f, {});
  const ScaleOutTraffic t = scale_out_traffic(full, b, 8);
  const double m = 768 / 4;
  CHECK(t.dp_s == Approx(b.dp_traffic_s));
  CHECK(t.pp_s == Approx(2 * m * b.pp_transfer_s));  // activations forward, gradients back
  CHECK(t.cp_s == 0);
  CHECK(t.ep_s == 0);
  // The pipeline's exposed transfers include the fill and drain's, on other stages' links.
  CHECK(b.pp_exposed_s > t.pp_s);
  CHECK(t.exposed_s == Approx(b.dp_exposed_s + t.pp_s));
  CHECK(t.total_s() >= t.exposed_s);
  // TP 2 x DP 16 in rank order tensor, context, data, pipeline: a data ring steps by 2 GPUs, so 4
  // of its 16 neighbour pairs (7 of 8 to 8, 15 to 16, 23 to 24, and 31 back to 0) cross nodes.
  Workload narrow = full;
  narrow.layout.tp = 2;
  narrow.layout.dp = 16;
  REQUIRE(check_layout(narrow, 8).empty());
  const StepBreakdown nb = step_time(narrow, f, {});
  const ScaleOutTraffic nt = scale_out_traffic(narrow, nb, 8);
  CHECK(nt.dp_s == Approx(0.25 * nb.dp_traffic_s));
  CHECK(nt.pp_s == Approx(2 * 768 / 16 * nb.pp_transfer_s));
  // Context parallel inside a node sends nothing between nodes; across nodes, every ring step
  // of every pass of every layer of the critical stage.
  Workload inside = llama405b();
  inside.model.layers = 128;
  inside.layout.tp = 4;
  inside.layout.cp = 2;
  REQUIRE(check_layout(inside, 8).empty());
  CHECK(scale_out_traffic(inside, step_time(inside, f, {}), 8).cp_s == 0);
  Workload across = llama405b();
  across.model.layers = 128;
  across.layout.cp = 2;
  REQUIRE(check_layout(across, 8).empty());
  const StepBreakdown cb = step_time(across, f, {});
  const WorkloadCosts c = workload_costs(across);
  int layers = 0;
  for (const StageCost& st : c.stages) layers = std::max(layers, st.layers);
  const ScaleOutTraffic ct = scale_out_traffic(across, cb, 8);
  CHECK(ct.cp_s == Approx(c.micro_batches * layers * c.cp_passes_per_layer * 1 * cb.cp_transfer_s));
  CHECK(ct.cp_s > 0);
  // One node per GPU: every pair crosses.
  CHECK(scale_out_traffic(narrow, nb, 1).dp_s == Approx(nb.dp_traffic_s));
}

TEST_CASE("the attention core's backward at its own efficiency: twice the forward's products, the forward's when not given", "[step][layout]") {
  Workload w = llama405b_on_16_stages();
  w.efficiency.attention = 0.5;
  const double same = workload_costs(w).stages[1].compute_s;
  w.efficiency.attention_backward = 0.5;  // stated as the forward's: nothing moves
  CHECK(workload_costs(w).stages[1].compute_s == Approx(same).epsilon(1e-12));
  // The forward alone at half speed costs its time again; the backward alone, twice that.
  w.efficiency.attention = 0.25;
  const double forward_slow = workload_costs(w).stages[1].compute_s - same;
  w.efficiency.attention = 0.5;
  w.efficiency.attention_backward = 0.25;
  const double backward_slow = workload_costs(w).stages[1].compute_s - same;
  CHECK(forward_slow > 0);
  CHECK(backward_slow == Approx(2 * forward_slow));
  // Selective recomputation runs the forward again: it weighs half the backward.
  w.efficiency.attention_backward = 0.5;
  w.layout.recompute = Recompute::Selective;
  const double recomputed = workload_costs(w).stages[1].compute_s;
  w.efficiency.attention = 0.25;
  CHECK(workload_costs(w).stages[1].compute_s - recomputed == Approx(2 * forward_slow));
  // Its half-length: half of the efficiency at that chunk.
  w.efficiency.attention = 0.5;
  w.efficiency.attention_backward = 0.5;
  w.efficiency.attention_backward_half_seq = 8192;  // at a chunk of 8,192: 0.25
  const double halved = workload_costs(w).stages[1].compute_s;
  w.efficiency.attention_backward = 0.25;
  w.efficiency.attention_backward_half_seq = 0;
  CHECK(workload_costs(w).stages[1].compute_s == Approx(halved));
}
