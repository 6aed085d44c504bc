#include "models/workload.hpp"

#include "models/pipeline_schedule.hpp"

#include <algorithm>
#include <numeric>

namespace ctwin {

namespace {
double ffn(const ModelShape& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden; }
double mlp_params(const ModelShape& m) { return (m.gated_mlp ? 3.0 : 2.0) * m.hidden * ffn(m); }
//! The share of a multi-head layer's key/value width that grouped-query attention keeps.
double kv_share(const ModelShape& m) { return m.kv_heads > 0 ? static_cast<double>(m.kv_heads) / m.heads : 1.0; }
//! Q and O are h x h; K and V are h x (h · kv_heads / heads).
double attention_params(const ModelShape& m) { return (2.0 + 2.0 * kv_share(m)) * m.hidden * m.hidden; }
}  // namespace

int degree(const ParallelLayout& p, RankDim d) {
  switch (d) {
    case RankDim::Tensor: return p.tp;
    case RankDim::Context: return p.cp;
    case RankDim::Data: return p.dp;
    case RankDim::Pipeline: return p.pp;
  }
  return 1;
}

std::string rank_order_text(const std::array<RankDim, 4>& order) {
  std::string out;
  for (RankDim d : order) {
    if (!out.empty()) out += '-';
    out += d == RankDim::Tensor ? "tp" : d == RankDim::Context ? "cp" : d == RankDim::Data ? "dp" : "pp";
  }
  return out;
}

std::vector<int> stage_layers(const Workload& w) {
  const ParallelLayout& p = w.layout;
  const int layers = w.model.layers;
  if (p.pp < 1) return {};
  if (!p.stage_layers.empty()) return p.stage_layers;
  // Megatron's accounting: the embedding and the loss may each count as one layer of the split.
  const int first_extra = p.embedding_as_layer ? 1 : 0, last_extra = p.loss_as_layer ? 1 : 0;
  const int units = layers + first_extra + last_extra;
  if (units % p.pp != 0) return {};
  std::vector<int> out(p.pp, units / p.pp);
  out.front() -= first_extra;
  out.back() -= last_extra;
  if (*std::min_element(out.begin(), out.end()) < 0) return {};
  return out;
}

std::string check_layout(const Workload& w, int gpus_per_node) {
  const ModelShape& m = w.model;
  const ParallelLayout& p = w.layout;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || m.vocab <= 0 || m.seq_len <= 0)
    return "the model needs layers, hidden, heads, vocab and seq_len";
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.ep < 1 || p.virtual_stages < 1 || p.micro_batch < 1)
    return "every parallel degree must be at least 1";
  if (gpus_per_node % p.tp != 0) return "tp must divide the GPUs per node: tensor parallelism stays inside NVLink";
  int inner = 1;  // the stride of a tensor group: the degrees ordered before it
  for (RankDim d : p.rank_order) {
    if (d == RankDim::Tensor) break;
    inner *= degree(p, d);
  }
  if (gpus_per_node % (inner * p.tp) != 0)
    return "rank_order spreads a tensor-parallel group over nodes: the degrees before tp, times tp, must divide the GPUs per node";
  if (m.heads % p.tp != 0) return "tp must divide the attention heads";
  if (m.kv_heads > 0 && m.heads % m.kv_heads != 0) return "kv_heads must divide the attention heads";
  if (m.kv_heads > 0 && m.kv_heads % p.tp != 0) return "tp must divide kv_heads: each tensor rank holds whole key/value heads";
  const std::vector<int> stages = stage_layers(w);
  if (!p.stage_layers.empty()) {
    if (static_cast<int>(p.stage_layers.size()) != p.pp) return "stage_layers must list one count per pipeline stage (pp)";
    if (std::accumulate(p.stage_layers.begin(), p.stage_layers.end(), 0) != m.layers) return "stage_layers must add up to the layers";
  } else if (stages.empty()) {
    return p.embedding_as_layer || p.loss_as_layer ? "pp must divide the layers plus the embedding and loss counted as layers"
                                                   : "pp must divide the layers (or give stage_layers)";
  }
  // An even split interleaves each stage as virtual_stages equal chunks; Megatron counts the
  // embedding (first chunk) and the loss (last chunk) as layers of that cut when asked to. Stated
  // stage_layers stand for an explicit layout (Megatron's pipeline_model_parallel_layout), whose
  // chunks may differ.
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (stages[i] < 0) return "a stage cannot hold fewer than 0 layers";
    if (!p.stage_layers.empty()) continue;
    const int units = stages[i] + (i == 0 && p.embedding_as_layer ? 1 : 0) + (i + 1 == stages.size() && p.loss_as_layer ? 1 : 0);
    if (units % chunks_per_stage(p) != 0)
      return p.embedding_as_layer || p.loss_as_layer
                 ? "virtual_stages must divide every stage's layers (the embedding and loss counted as layers)"
                 : "virtual_stages must divide every stage's layers";
  }
  if (p.global_batch % (p.micro_batch * p.dp) != 0) return "micro_batch x dp must divide the global batch";
  if (const std::string why = check_schedule(p, p.global_batch / (p.micro_batch * p.dp)); !why.empty()) return why;
  if (m.seq_len % p.cp != 0) return "cp must divide the sequence length";
  if (m.experts % p.ep != 0 || p.dp % p.ep != 0) return "ep must divide both the experts and dp";
  if (m.top_k < 1 || m.top_k > m.experts) return "top_k must be between 1 and the experts";
  return "";
}

WorkloadCosts workload_costs(const Workload& w) {
  const ModelShape& m = w.model;
  const ParallelLayout& p = w.layout;
  WorkloadCosts c;
  c.gpus = p.tp * p.pp * p.dp * p.cp;
  const double h = m.hidden, s = m.seq_len, l = m.layers;
  const double logits = static_cast<double>(m.vocab) * h;
  const double dense = l * attention_params(m) + logits;
  const double experts = l * mlp_params(m) * m.experts;
  c.parameters = dense + experts + logits;  // + the input embedding (untied)
  c.active_parameters = dense + l * mlp_params(m) * m.top_k;
  const double attention = 12 * s * h * l;  // score and value matmuls, forward + backward
  c.model_flops_per_token = 6 * c.active_parameters + attention;
  // What the GPUs run per token: a layer's model FLOPs and its recomputation, split into the
  // projections and MLP (the GEMMs FP8 training speeds up) and the attention core (bf16 either
  // way); the output layer (6·V·h, bf16) runs once, on the last stage.
  // The core's forward (scores and values) and backward (twice its products), apart: a kernel
  // runs them at different efficiencies. A recomputed forward (selective or full) runs again.
  const double causal = w.attention == AttentionKernel::Flash ? 0.5 : 1.0;  // flash skips the masked half
  double layer_gemm = 6 * (attention_params(m) + mlp_params(m) * m.top_k);
  double core_forward = 4 * s * h * causal;
  const double core_backward = 8 * s * h * causal;
  if (p.recompute == Recompute::Selective) core_forward += 4 * s * h * causal;
  if (p.recompute == Recompute::Full) layer_gemm *= 4.0 / 3, core_forward += 4 * s * h * causal;
  c.hardware_flops_per_token = l * (layer_gemm + core_forward + core_backward) + 6 * logits;
  c.tokens_per_step = static_cast<double>(p.global_batch) * s;
  c.micro_batches = (p.global_batch + p.micro_batch * p.dp - 1) / (p.micro_batch * p.dp);
  const double tokens_per_micro_batch = static_cast<double>(p.micro_batch) * s;
  const double split = static_cast<double>(p.tp) * p.cp;  // the GPUs sharing one stage's work
  const double achieved = w.efficiency.gemm * h / (h + w.efficiency.gemm_half_hidden);
  const double flop_s = w.gpu_peak_flops * achieved;
  const double gemm_flop_s = (w.gemm_peak_flops > 0 ? w.gemm_peak_flops : w.gpu_peak_flops) * achieved;
  const double chunk_tokens = s / p.cp;
  auto at_chunk = [&](double efficiency, double half) { return w.gpu_peak_flops * efficiency * chunk_tokens / (chunk_tokens + half); };
  const double attention_flop_s = w.efficiency.attention > 0 ? at_chunk(w.efficiency.attention, w.efficiency.attention_half_seq) : flop_s;
  const double backward_flop_s = w.efficiency.attention_backward > 0
                                     ? at_chunk(w.efficiency.attention_backward, w.efficiency.attention_backward_half_seq)
                                     : attention_flop_s;
  // Seconds a token of one layer takes on one GPU at full speed.
  const double layer_s = layer_gemm / gemm_flop_s + core_forward / attention_flop_s + core_backward / backward_flop_s;
  const double layer_experts_per_gpu = m.experts > 1 ? mlp_params(m) * m.experts / (static_cast<double>(p.tp) * p.ep) : 0;
  const double layer_params_per_gpu = attention_params(m) / p.tp + (m.experts > 1 ? layer_experts_per_gpu : mlp_params(m) / p.tp);
  const std::vector<int> layers = stage_layers(w);
  double largest_stage = 0;
  int largest_stage_layers = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    StageCost st;
    st.layers = layers[i];
    const bool last = i + 1 == layers.size();
    st.compute_s = (st.layers * layer_s + (last ? 6 * logits / flop_s : 0)) * tokens_per_micro_batch / split;
    // The embedding on the first stage, the output layer on the last (untied).
    st.parameters = st.layers * layer_params_per_gpu + ((i == 0 ? logits : 0) + (last ? logits : 0)) / p.tp;
    st.expert_parameters = st.layers * layer_experts_per_gpu;
    if (st.parameters > largest_stage) largest_stage = st.parameters, largest_stage_layers = st.layers;
    c.stages.push_back(st);
  }
  const double activation_bytes = tokens_per_micro_batch / p.cp * h * 2;  // bf16
  c.tp_bytes = p.tp > 1 ? activation_bytes : 0;
  const int recomputed = p.recompute == Recompute::Full ? 1 : 0;
  c.tp_collectives_per_layer = p.tp > 1 ? 4 + 2 * recomputed : 0;
  c.pp_bytes = p.pp > 1 ? activation_bytes / (p.sequence_parallel ? p.tp : 1) : 0;
  // Data parallelism spans the context ranks too: they hold the same parameters.
  c.dp_bytes = p.dp * p.cp > 1 ? largest_stage * w.efficiency.grad_bytes : 0;
  // ZeRO-3 / FSDP: each decoder layer (with the embedding or the output layer on its stage's share)
  // is a unit whose bf16 parameters are gathered before its forward and again before its
  // backward, and whose gradients are reduce-scattered after it, every micro-batch.
  if (p.zero_stage == 3 && p.dp * p.cp > 1) {
    c.fsdp_units = std::max(1, largest_stage_layers);
    c.dp_bytes = largest_stage * 2 / c.fsdp_units;
  }
  // MoE (every layer): each GPU holds 1/tp of the micro-batch's tokens (sequence parallel) and sends
  // each to its top_k experts; Megatron's dispatch and combine, again in backward.
  if (p.ep > 1) {
    c.ep_bytes = activation_bytes / p.tp * m.top_k;
    c.ep_collectives_per_layer = 4 + 2 * recomputed;
  }
  // Context parallel: the local K and V chunk (this GPU's 1/tp of the key/value heads) reaches every
  // other context rank once a pass.
  if (p.cp > 1) {
    c.cp_bytes = 2 * activation_bytes / p.tp * kv_share(m);
    c.cp_passes_per_layer = 3 + recomputed;
    const double chunk = s / p.cp;
    c.cp_chunk_attention_s = 4 * chunk * chunk * h * p.micro_batch / p.tp / attention_flop_s;  // QK^T and AV, forward
  }
  return c;
}

}  // namespace ctwin
