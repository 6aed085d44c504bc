#pragma once
//! Achieved efficiencies by software stack, GPU generation and precision, each fitted on that
//! stack's published table of step times with its layouts, its other rows predicted
//! (docs/step-time.md). A workload that states no `gemm` takes the GPU's and precision's default
//! stack preset (Megatron's: NeMo on H100, Megatron-LM on A100), or names one (`efficiency.preset`:
//! "pytorch-fsdp-h100-bf16", ...); fields it states override the preset's. Where no table was
//! found (H200) there is no preset: such a scenario states its efficiencies, or names the nearest
//! preset on purpose.

#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"

namespace ctwin {

struct EfficiencyPreset {
  std::string name;        //!< e.g. "a100-bf16"
  std::string stack;       //!< the software stack whose table it was fitted on: "NeMo / Megatron-Core"
  std::vector<std::string> aliases;  //!< other names it answers to: "nemo-h100-bf16"
  bool default_for_gpu = true;  //!< chosen for its GPU and precision when the scenario names none
  std::string gpu_family;  //!< matched within cluster.gpu.model, ignoring case: "A100"
  bool fp8 = false;        //!< the workload's precision it was fitted in
  Efficiency efficiency;
  std::string source;      //!< the table it was fitted on, and the command that fits it
  double predicted_error = 0;  //!< the worst error on that table's rows it was not fitted on
};

//! The median of the presets' worst predicted errors: the model's own error where no preset is
//! used (efficiencies stated, fitted elsewhere).
double typical_predicted_error();

const std::vector<EfficiencyPreset>& efficiency_presets();
//! The preset of that name, or null.
const EfficiencyPreset* find_efficiency_preset(std::string_view name);
//! The preset fitted for that GPU model's family and precision, or null.
const EfficiencyPreset* efficiency_preset_for(std::string_view gpu_model, bool fp8);
//! An efficiency another software stack or kernel reached on the same GPU: what `ctwin step
//! --sensitivity` varies a preset's over. Fields left 0 keep the workload's.
struct EfficiencyAlternative {
  std::string name;    //!< as a person names it: "PyTorch FSDP (MosaicML)", "FlashAttention-3"
  std::string source;  //!< the table or figure, and the command that fits it
  double gemm = 0, gemm_half_hidden = 0;
  bool sets_attention = false;  //!< sets the attention core's four fields (0: the layers' efficiency)
  double attention = 0, attention_half_seq = 0, attention_backward = 0, attention_backward_half_seq = 0;
};

//! The layers' GEMM efficiency as each stack's preset has it on this GPU and precision (H100 and
//! H200 share tensor cores); empty where fewer than two stacks were fitted.
std::vector<EfficiencyAlternative> gemm_by_stack(std::string_view gpu_model, bool fp8);
//! The attention core as published kernels run it on this GPU (H100, H200); empty elsewhere.
std::vector<EfficiencyAlternative> attention_by_kernel(std::string_view gpu_model);

//! "a100-bf16, h100-fp8": for error messages.
std::string efficiency_preset_names();

}  // namespace ctwin
