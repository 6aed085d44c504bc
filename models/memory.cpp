#include "models/memory.hpp"

#include <algorithm>
#include <cstdio>

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
    u.weights = sharded(2, 3);
    u.gradients = sharded(grad, 2);
    u.optimizer = sharded(12, 1);
    const double in_flight = std::min<double>(c.micro_batches, p.pp - static_cast<double>(i)) *
                             (p.virtual_stages > 1 ? 1 + (p.pp - 1.0) / (p.pp * p.virtual_stages) : 1.0);
    u.activations = st.layers * layer * in_flight;
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

}  // namespace ctwin
