#pragma once
//! Achieved efficiencies per GPU generation and precision, each fitted on a published table of
//! step times with its layouts (docs/step-time.md). A workload that states no `gemm` takes the
//! preset of its `cluster.gpu.model` and `precision`, or names one (`efficiency.preset`); fields
//! it states override the preset's. Where no table was found (H100 in bf16, H200) there is no
//! preset: such a scenario states its efficiencies, or names the nearest preset on purpose.

#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"

namespace ctwin {

struct EfficiencyPreset {
  std::string name;        //!< e.g. "a100-bf16"
  std::string gpu_family;  //!< matched within cluster.gpu.model, ignoring case: "A100"
  bool fp8 = false;        //!< the workload's precision it was fitted in
  Efficiency efficiency;
  std::string source;      //!< the table it was fitted on, and the command that fits it
};

const std::vector<EfficiencyPreset>& efficiency_presets();
//! The preset of that name, or null.
const EfficiencyPreset* find_efficiency_preset(std::string_view name);
//! The preset fitted for that GPU model's family and precision, or null.
const EfficiencyPreset* efficiency_preset_for(std::string_view gpu_model, bool fp8);
//! "a100-bf16, h100-fp8": for error messages.
std::string efficiency_preset_names();

}  // namespace ctwin
