#include "models/memory.hpp"

#include "models/pipeline_schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace ctwin {

namespace {

//! Bytes one layer stores for one micro-batch on one GPU.
double layer_activation_bytes(const Workload& w) {
  const ModelShape& m = w.model;
  const ParallelLayout& p = w.layout;
  const double s = static_cast<double>(m.seq_len) / p.cp, b = p.micro_batch, h = m.hidden, t = p.tp;
  const double sbh = s * b * h;
  const double kv = m.kv_heads > 0 ? static_cast<double>(m.kv_heads) / m.heads : 1.0;
  const double f = m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * h;
  if (p.recompute == Recompute::Full) return 2 * sbh / (p.sequence_parallel ? t : 1);
  // Split by tensor parallelism: Q, K and V, the projection's input; the MLP's hidden activations
  // (both halves and their product when gated); top_k experts' worth for MoE.
  const double attention = 4 + 4 * kv;
  const double mlp = (m.gated_mlp ? 6.0 : 4.0) * f / h * m.top_k;
  // Left whole without sequence parallelism: two layer norms, the GEMM inputs, the dropout masks.
  const double replicated = 10;
  double bytes = sbh * ((attention + mlp) / t + replicated / (p.sequence_parallel ? t : 1));
  // An unfused attention keeps its scores, softmax and dropout mask for the backward; a flash kernel
  // keeps only per-row statistics (negligible) and recomputes the scores in the backward.
  if (p.recompute == Recompute::None && w.attention == AttentionKernel::Full) bytes += 5.0 * m.heads * s * s * b / t;
  return bytes;
}

}  // namespace

MemoryUse memory_per_gpu(const Workload& w) {
  const ParallelLayout& p = w.layout;
  const WorkloadCosts c = workload_costs(w);
  const double shards = static_cast<double>(p.dp) * p.cp;
  const double grad = w.efficiency.grad_bytes;
  const double layer = layer_activation_bytes(w);
  MemoryUse best;
  for (std::size_t i = 0; i < c.stages.size(); ++i) {
    const StageCost& st = c.stages[i];
    // Expert parameters are sharded over fewer replicas (dp·cp/ep) than the dense ones.
    const double dense = st.parameters - st.expert_parameters, experts = st.expert_parameters;
    auto sharded = [&](double bytes_per_param, int from_stage) {
      return p.zero_stage >= from_stage ? bytes_per_param * (dense / shards + experts * p.ep / shards)
                                        : bytes_per_param * (dense + experts);
    };
    MemoryUse u;
    u.stage = static_cast<int>(i);
    const int copies = parameter_copies(p);  // DualPipe holds two
    u.weights = copies * sharded(2, 3);
    u.gradients = copies * sharded(grad, 2);
    u.optimizer = copies * sharded(12, 1);
    const double in_flight = micro_batches_in_flight(p, c.micro_batches, static_cast<int>(i));
    u.activations = st.layers * layer * (std::min(1.0, in_flight) + std::max(0.0, in_flight - 1) * (1 - p.activation_offload));
    if (p.recompute == Recompute::Full && st.layers > 0) {  // one layer recomputed at a time
      Workload whole = w;
      whole.layout.recompute = Recompute::Selective;
      u.activations += layer_activation_bytes(whole);
    }
    if (i + 1 == c.stages.size())  // fp32 logits for the loss, one micro-batch
      u.activations += 4.0 * w.model.seq_len / p.cp * p.micro_batch * w.model.vocab / p.tp;
    if (u.total() > best.total()) best = u;
  }
  return best;
}

double offload_exposed_s(const Workload& w, int stage, double stage_compute_s, int micro_batches) {
  const ParallelLayout& p = w.layout;
  if (p.activation_offload <= 0 || w.host_bandwidth <= 0) return 0;
  const std::vector<int> layers = stage_layers(w);
  if (stage < 0 || static_cast<std::size_t>(stage) >= layers.size()) return 0;
  const double moved_s = p.activation_offload * layers[stage] * layer_activation_bytes(w) / w.host_bandwidth;
  const double forward = stage_compute_s * (p.recompute == Recompute::Full ? 0.25 : 1.0 / 3), backward = stage_compute_s - forward;
  return micro_batches * (std::max(0.0, moved_s - forward) + std::max(0.0, moved_s - backward));
}

std::string check_memory(const Workload& w, double capacity_bytes) {
  if (capacity_bytes <= 0) return "";
  const MemoryUse u = memory_per_gpu(w);
  if (u.total() <= capacity_bytes) return "";
  char text[256];
  std::snprintf(text, sizeof text,
                "does not fit in GPU memory: stage %d needs %.1f GiB (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f) of %.1f GiB",
                u.stage, u.total() / (1 << 30), u.weights / (1 << 30), u.gradients / (1 << 30), u.optimizer / (1 << 30),
                u.activations / (1 << 30), capacity_bytes / (1 << 30));
  return text;
}

namespace {

//! A step's compute and bubble on its slowest stage, collectives aside: what a change costs.
double compute_and_bubble_s(const Workload& w) {
  const WorkloadCosts c = workload_costs(w);
  double total = 0, critical = 0;
  int slowest = 0;
  for (std::size_t i = 0; i < c.stages.size(); ++i) {
    total += c.stages[i].compute_s;
    if (c.stages[i].compute_s > critical) critical = c.stages[i].compute_s, slowest = static_cast<int>(i);
  }
  return critical * c.micro_batches + (total - critical) * bubble_factor(w.layout, c.micro_batches) +
         offload_exposed_s(w, slowest, critical, c.micro_batches);
}

}  // namespace

std::string cheapest_fit(const Workload& w, double capacity_bytes, int gpus_per_node) {
  const ParallelLayout& p = w.layout;
  struct Candidate {
    std::string change;
    ParallelLayout layout;
  };
  std::vector<Candidate> candidates;
  auto with = [&](std::string change, auto edit) {
    ParallelLayout l = p;
    edit(l);
    candidates.push_back({std::move(change), l});
  };
  if (p.pp > 1) {
    for (const PipelineSchedule s : {PipelineSchedule::OneFOneB, PipelineSchedule::ZeroBubbleH1, PipelineSchedule::ZeroBubbleV, PipelineSchedule::DualPipe})
      with(std::string("schedule ") + to_string(s), [s](ParallelLayout& l) { l.schedule = s, l.virtual_stages = 1, l.contiguous_micro_batches = 0; });
    for (int v = 2; v <= 8; ++v)
      for (int n = 1; n <= p.pp; n *= 2)
        with("schedule flexible_interleaved, virtual_stages " + std::to_string(v) + ", contiguous_micro_batches " + std::to_string(n),
             [v, n](ParallelLayout& l) { l.schedule = PipelineSchedule::FlexibleInterleaved, l.virtual_stages = v, l.contiguous_micro_batches = n; });
  }
  for (const Recompute r : {Recompute::Selective, Recompute::Full})
    if (static_cast<int>(r) > static_cast<int>(p.recompute))
      with(std::string("recompute ") + (r == Recompute::Full ? "full" : "selective"), [r](ParallelLayout& l) { l.recompute = r; });
  for (const double f : {0.5, 1.0})
    if (f > p.activation_offload) with("activation_offload " + std::string(f < 1 ? "0.5" : "1"), [f](ParallelLayout& l) { l.activation_offload = f; });
  for (int b = p.micro_batch - 1; b >= 1; --b)
    if (p.global_batch % (b * p.dp) == 0) with("micro_batch " + std::to_string(b), [b](ParallelLayout& l) { l.micro_batch = b; });
  const double base = compute_and_bubble_s(w);
  std::string best;
  double best_s = 0;
  for (const Candidate& c : candidates) {
    Workload trial = w;
    trial.layout = c.layout;
    if (!check_layout(trial, gpus_per_node).empty() || !check_memory(trial, capacity_bytes).empty()) continue;
    const double s = compute_and_bubble_s(trial);
    if (best.empty() || s < best_s) best = c.change, best_s = s;
  }
  if (best.empty()) return "";
  char cost[80];
  std::snprintf(cost, sizeof cost, " (the step, collectives aside: %+.0f %%)", 100 * (best_s / base - 1));
  return best + cost;
}

}  // namespace ctwin
