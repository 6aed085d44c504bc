#include "models/workload.hpp"

namespace ctwin {

namespace {
double ffn(const ModelShape& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden; }
double mlp_params(const ModelShape& m) { return (m.gated_mlp ? 3.0 : 2.0) * m.hidden * ffn(m); }
double attention_params(const ModelShape& m) { return 4.0 * m.hidden * m.hidden; }
}  // namespace

std::string check_layout(const Workload& w, int gpus_per_node) {
  const ModelShape& m = w.model;
  const ParallelLayout& p = w.layout;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0 || m.vocab <= 0 || m.seq_len <= 0)
    return "the model needs layers, hidden, heads, vocab and seq_len";
  if (p.tp < 1 || p.pp < 1 || p.dp < 1 || p.cp < 1 || p.ep < 1 || p.virtual_stages < 1 || p.micro_batch < 1)
    return "every parallel degree must be at least 1";
  if (gpus_per_node % p.tp != 0) return "tp must divide the GPUs per node: tensor parallelism stays inside NVLink";
  if (m.heads % p.tp != 0) return "tp must divide the attention heads";
  if (m.layers % (p.pp * p.virtual_stages) != 0) return "pp x virtual_stages must divide the layers";
  if (p.global_batch % (p.micro_batch * p.dp) != 0) return "micro_batch x dp must divide the global batch";
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
  c.hardware_flops_per_token = c.model_flops_per_token;
  if (p.recompute == Recompute::Selective) c.hardware_flops_per_token += attention / 3;
  if (p.recompute == Recompute::Full) c.hardware_flops_per_token += c.model_flops_per_token / 3;
  c.tokens_per_step = static_cast<double>(p.global_batch) * s;
  c.micro_batches = (p.global_batch + p.micro_batch * p.dp - 1) / (p.micro_batch * p.dp);
  const double tokens_per_micro_batch = static_cast<double>(p.micro_batch) * s;
  const double split = static_cast<double>(p.tp) * p.pp * p.cp;
  c.compute_per_micro_batch_s =
      c.hardware_flops_per_token * tokens_per_micro_batch / split / (w.gpu_peak_flops * w.efficiency.gemm);
  c.bubble_fraction = static_cast<double>(p.pp - 1) / (static_cast<double>(p.virtual_stages) * c.micro_batches);
  const double activation_bytes = tokens_per_micro_batch / p.cp * h * 2;  // bf16
  c.tp_bytes = p.tp > 1 ? activation_bytes : 0;
  const int per_layer = 4 + (p.recompute == Recompute::Full ? 2 : 0);  // two in forward, two in backward
  c.tp_collectives_per_micro_batch = p.tp > 1 ? per_layer * (m.layers / p.pp) : 0;
  c.pp_bytes = p.pp > 1 ? activation_bytes : 0;
  const double params_per_gpu = dense / (p.tp * p.pp) + experts / (static_cast<double>(p.tp) * p.pp * p.ep);
  // Data parallelism spans the context ranks too: they hold the same parameters.
  c.dp_bytes = p.dp * p.cp > 1 ? params_per_gpu * w.efficiency.grad_bytes : 0;
  // MoE (every layer): each GPU holds 1/tp of the micro-batch's tokens (sequence parallel) and sends
  // each to its top_k experts; Megatron's dispatch and combine, again in backward.
  const int layers_per_stage = m.layers / p.pp;
  const int recomputed = p.recompute == Recompute::Full ? 1 : 0;
  if (p.ep > 1) {
    c.ep_bytes = activation_bytes / p.tp * m.top_k;
    c.ep_collectives_per_micro_batch = (4 + 2 * recomputed) * layers_per_stage;
  }
  // Ring attention: the local K and V chunk (of this GPU's 1/tp of the heads) goes round the ring.
  if (p.cp > 1) {
    c.cp_bytes = 2 * activation_bytes / p.tp;
    c.cp_transfers_per_micro_batch = (p.cp - 1) * (3 + recomputed) * layers_per_stage;
  }
  return c;
}

}  // namespace ctwin
