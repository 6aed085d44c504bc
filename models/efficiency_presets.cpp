#include "models/efficiency_presets.hpp"

#include <algorithm>
#include <cctype>

namespace ctwin {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<EfficiencyPreset> make_presets() {
  std::vector<EfficiencyPreset> out;
  // Megatron-LM's rows of MegaScale's Table 2 (175B, 256-12,288 A100s): no overlap, the
  // collectives at half the simulated bandwidth. `build/ctwin_validate_step` fits it.
  EfficiencyPreset a100{"a100-bf16", "Megatron-LM", {"megatron-a100-bf16"}, true, "A100", false, {}, ""};
  a100.efficiency.gemm = 0.703;
  a100.efficiency.bandwidth = 0.513;
  a100.source = "MegaScale (NSDI'24) Table 2, Megatron-LM rows, fitted on 2 of 8 by build/ctwin_validate_step";
  a100.predicted_error = 0.051;
  out.push_back(a100);
  // NVIDIA's NeMo 24.07 DGX-H100 FP8 table (5B-175B, 8-512 GPUs): Transformer Engine hides most
  // tensor- and data-parallel traffic and the context-parallel ring. `bench/validate_h100.py`
  // fits the GEMM efficiency and the exposed share of communication (1 - overlap at full bandwidth).
  EfficiencyPreset h100{"h100-fp8", "NeMo / Megatron-Core (Transformer Engine)", {"nemo-h100-fp8"}, true, "H100", true, {}, ""};
  h100.efficiency.gemm = 0.444;
  h100.efficiency.tp_overlap = h100.efficiency.dp_overlap = 0.740;
  h100.efficiency.cp_overlap = 1;
  h100.source = "NeMo 24.07 performance summary, DGX-H100 FP8, fitted on 3 of 9 rows by bench/validate_h100.py";
  h100.predicted_error = 0.103;
  out.push_back(h100);
  // NVIDIA's dgxc-benchmarking v25.04 Llama 3.1 table, DGX-H100 BF16 (8B on 8-128 GPUs, 70B on
  // 64-2,048, 405B on 32-2,048): fitted on one row of each size by bench/validate_dgxc.py, the
  // other 14 predicted within 2.3 %.
  EfficiencyPreset h100_bf16{"h100-bf16", "NeMo / Megatron-Core", {"nemo-h100-bf16"}, true, "H100", false, {}, ""};
  h100_bf16.efficiency.gemm = 0.5775;
  h100_bf16.efficiency.tp_overlap = h100_bf16.efficiency.dp_overlap = 0.6469;
  h100_bf16.efficiency.cp_overlap = 1;
  h100_bf16.source = "dgxc-benchmarking v25.04 Llama 3.1, DGX-H100 BF16, fitted on 3 of 17 rows by bench/validate_dgxc.py";
  h100_bf16.predicted_error = 0.023;
  out.push_back(h100_bf16);
  // MosaicML's llm-foundry table (PyTorch FSDP, one node of 8 H100, BF16): the GEMM law and the
  // attention core (Triton FlashAttention) fitted on 760M, 3B and 13B, the 1B, 7B and 30B rows
  // predicted (`bench/fit_attention.py`): worst 30 % (30B), mean 7.7 %. Its own data shows the
  // width law; single-node FSDP over NVLink, so no overlap was fitted.
  EfficiencyPreset fsdp{"pytorch-fsdp-h100-bf16", "PyTorch FSDP, MosaicML llm-foundry", {}, false, "H100", false, {}, ""};
  fsdp.efficiency.gemm = 0.8271;
  fsdp.efficiency.gemm_half_hidden = 1337;
  fsdp.efficiency.attention = fsdp.efficiency.attention_backward = 0.1703;
  fsdp.efficiency.attention_half_seq = fsdp.efficiency.attention_backward_half_seq = 1523;
  fsdp.source = "llm-foundry MPT H100 BF16 table, fitted on 3 of 6 sizes by bench/fit_attention.py";
  fsdp.predicted_error = 0.30;
  out.push_back(fsdp);
  // torchtitan's FSDP2 table (64 A100 80GB, Llama 2/3 8B-70B): one efficiency and the collectives'
  // bandwidth share fitted on three rows, two predicted (`bench/fit_torchtitan.py`). A width law
  // fits better but only with an asymptote (0.91 of peak) no A100 kernel reaches: not taken.
  EfficiencyPreset titan{"torchtitan-a100-bf16", "torchtitan (PyTorch FSDP2)", {}, false, "A100", false, {}, ""};
  titan.efficiency = a100.efficiency;
  titan.efficiency.gemm = 0.5649;
  titan.efficiency.bandwidth = 0.825;
  titan.source = "torchtitan docs/performance.md FSDP2 table, 64 A100, fitted on 3 of 5 exact rows by bench/fit_torchtitan.py";
  titan.predicted_error = 0.128;
  out.push_back(titan);
  return out;
}

}  // namespace

const std::vector<EfficiencyPreset>& efficiency_presets() {
  static const std::vector<EfficiencyPreset> presets = make_presets();
  return presets;
}

const EfficiencyPreset* find_efficiency_preset(std::string_view name) {
  for (const auto& p : efficiency_presets())
    if (p.name == name || std::find(p.aliases.begin(), p.aliases.end(), name) != p.aliases.end()) return &p;
  return nullptr;
}

const EfficiencyPreset* efficiency_preset_for(std::string_view gpu_model, bool fp8) {
  const std::string model = lower(gpu_model);
  for (const auto& p : efficiency_presets())
    if (p.default_for_gpu && p.fp8 == fp8 && model.find(lower(p.gpu_family)) != std::string::npos) return &p;
  return nullptr;
}

namespace {
bool hopper(std::string_view gpu_model) {
  const std::string model = lower(gpu_model);
  return model.find("h100") != std::string::npos || model.find("h200") != std::string::npos;
}
}  // namespace

std::vector<EfficiencyAlternative> gemm_by_stack(std::string_view gpu_model, bool fp8) {
  // H200 runs H100's tensor cores: the H100 stacks' fits stand for it.
  const std::string model = hopper(gpu_model) ? std::string("h100") : lower(gpu_model);
  std::vector<EfficiencyAlternative> out;
  for (const auto& p : efficiency_presets())
    if (p.fp8 == fp8 && model.find(lower(p.gpu_family)) != std::string::npos)
      out.push_back({"preset " + p.name + ": " + p.stack, p.source, p.efficiency.gemm, p.efficiency.gemm_half_hidden});
  if (out.size() < 2) out.clear();
  return out;
}

std::vector<EfficiencyAlternative> attention_by_kernel(std::string_view gpu_model) {
  if (!hopper(gpu_model)) return {};
  std::vector<EfficiencyAlternative> out;
  EfficiencyAlternative layers{"as the layers' GEMMs", "the NeMo presets' (their tables hold one sequence length)"};
  layers.sets_attention = true;
  out.push_back(layers);
  EfficiencyAlternative triton{"Triton FlashAttention (MosaicML fit)", "llm-foundry H100 BF16 table, every single-node row, by bench/fit_attention.py"};
  triton.sets_attention = true;
  triton.attention = triton.attention_backward = 0.1703;
  triton.attention_half_seq = triton.attention_backward_half_seq = 1523;
  out.push_back(triton);
  // The FA3 paper's baselines (Figs. 5-6; scenarios/sources/h100_attention_kernels.md): the causal
  // forward, and the backward published without the mask.
  auto kernel = [&](const char* name, double forward, double forward_half, double backward, double backward_half) {
    EfficiencyAlternative k{name, "Shah et al. (arXiv 2407.08608) Figs. 5-6 baselines, head dim 128, scenarios/sources/h100_attention_kernels.md"};
    k.sets_attention = true;
    k.attention = forward, k.attention_half_seq = forward_half, k.attention_backward = backward, k.attention_backward_half_seq = backward_half;
    out.push_back(k);
  };
  kernel("FlashAttention-2", 0.3543, 404, 0.3327, 274);
  kernel("cuDNN fused attention", 0.5671, 387, 0.5477, 377);
  EfficiencyAlternative fa3{"FlashAttention-3", "Shah et al. (arXiv 2407.08608) Figs. 5-6, causal, head dim 128, by bench/fit_flash_kernels.py"};
  fa3.sets_attention = true;
  fa3.attention = 0.6709, fa3.attention_half_seq = 635, fa3.attention_backward = 0.6019, fa3.attention_backward_half_seq = 442;
  out.push_back(fa3);
  return out;
}

double typical_predicted_error() {
  std::vector<double> errors;
  for (const auto& p : efficiency_presets()) errors.push_back(p.predicted_error);
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  return n == 0 ? 0 : n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
}

std::string efficiency_preset_names() {
  std::string out;
  for (const auto& p : efficiency_presets()) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

}  // namespace ctwin
