// `ctwin step --sensitivity`: each field over its plausible values through the step model, the
// range over the assumed ones, and the field that moves it most.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/layout_variants.hpp"
#include "sim/step_sensitivity.hpp"
#include "support/step_fixtures.hpp"

using namespace ctwin;
using namespace ctwin::test;

namespace {

WorkloadSpec gpt175b_spec() {
  WorkloadSpec spec;
  spec.workload = gpt175b(1024, 1536);  // TP 8 x PP 8 x DP 16, 96 micro-batches a replica
  spec.fabric = a100_fabric();
  spec.fabric.nodes_per_leaf = 16;
  return spec;
}

const FieldSensitivity& field(const StepSensitivity& s, const std::string& name) {
  for (const FieldSensitivity& f : s.fields)
    if (f.field == name) return f;
  FAIL("no field " << name);
  throw;
}

}  // namespace

TEST_CASE("step sensitivity: every runnable value priced, the range over the assumed fields", "[step][sensitivity]") {
  WorkloadSpec spec = gpt175b_spec();
  spec.assumed = {{"/workload/parallel/virtual_stages", "1"}, {"/workload/parallel/sequence_parallel", "false"}};
  StepCache cache("");
  const StepSensitivity s = step_sensitivity(spec, 8, 0, cache);
  const double base = cache.get(spec, {}).step_s;
  CHECK(s.base_s == base);
  CHECK(s.over_assumed);
  const FieldSensitivity& vp = field(s, "virtual_stages");
  const FieldSensitivity& sp = field(s, "sequence_parallel");
  const FieldSensitivity& mb = field(s, "micro_batch");
  CHECK(vp.assumed);
  CHECK(sp.assumed);
  CHECK_FALSE(mb.assumed);
  // Sequence parallelism sends 1/tp of the activations between stages: never slower.
  CHECK(sp.min_s < base);
  CHECK(sp.fastest == "true");
  // The range is over the assumed fields only: larger micro-batches (fewer of them, a longer
  // bubble) are not in it.
  CHECK(mb.max_s > vp.max_s);
  CHECK(s.min_s == std::min(vp.min_s, sp.min_s));
  CHECK(s.max_s == std::max(vp.max_s, sp.max_s));
  CHECK(s.most == (vp.max_s - vp.min_s > sp.max_s - sp.min_s ? "virtual_stages" : "sequence_parallel"));
  for (const FieldSensitivity& f : s.fields) {
    CHECK(f.min_s <= base);
    CHECK(f.max_s >= base);
    for (const SensitivityPoint& p : f.points) CHECK((p.excluded.empty() ? p.step_s > 0 : p.step_s == 0));
  }
}

TEST_CASE("step sensitivity: each value prices as a full simulation of its layout does", "[step][sensitivity]") {
  // Virtual stages and the CP algorithm reuse the base's collectives; the other fields simulate
  // only the collectives whose sizes changed. Every value must still be what step_time says.
  WorkloadSpec spec = gpt175b_spec();
  spec.workload.layout.cp = 2;
  spec.workload.layout.dp = 8;
  spec.workload.layout.global_batch = 768;
  spec.workload.layout.sequence_parallel = true;
  StepCache cache("");
  const StepSensitivity s = step_sensitivity(spec, 8, 0, cache);
  CHECK_FALSE(s.over_assumed);  // nothing assumed: the range is over every field
  std::vector<LayoutField> layouts = plausible_layouts(spec.workload, 8, 0);
  for (LayoutField& f : plausible_efficiencies(spec.workload, spec.gpu_model)) layouts.push_back(std::move(f));
  REQUIRE(layouts.size() == s.fields.size());
  int checked = 0;
  for (std::size_t i = 0; i < layouts.size(); ++i)
    for (std::size_t j = 0; j < layouts[i].variants.size(); ++j) {
      const LayoutVariant& v = layouts[i].variants[j];
      INFO(layouts[i].name << " " << v.value);
      if (!v.excluded.empty()) continue;
      CHECK(s.fields[i].points[j].step_s == Approx(step_time(v.workload, spec.fabric, {}).step_s).epsilon(1e-12));
      ++checked;
    }
  CHECK(checked >= 12);
}

TEST_CASE("step sensitivity: the range over every field covers the assumed fields' range, and names its own field", "[step][sensitivity]") {
  WorkloadSpec spec = gpt175b_spec();
  spec.assumed = {{"/workload/parallel/sequence_parallel", "false"}};
  StepCache cache("");
  const StepSensitivity s = step_sensitivity(spec, 8, 0, cache);
  CHECK(s.most == "sequence_parallel");
  CHECK(s.min_all_s <= s.min_s);
  CHECK(s.max_all_s >= s.max_s);
  // Fewer, larger micro-batches lengthen the bubble more than anything else here.
  CHECK(s.most_all == "micro_batch");
  CHECK(s.max_all_s > s.max_s);
}

TEST_CASE("step sensitivity: the efficiencies over what other stacks and kernels reach on the GPU", "[step][sensitivity]") {
  // An A100 with no second stack fitted: the GEMM over the spread of the H100 stacks' fits.
  WorkloadSpec spec = gpt175b_spec();
  StepCache cache("");
  const StepSensitivity a100 = step_sensitivity(spec, 8, 0, cache);
  const FieldSensitivity& gemm = field(a100, "gemm");
  REQUIRE(gemm.points.size() == 3);
  CHECK(gemm.min_s < a100.base_s);
  CHECK(gemm.max_s > a100.base_s);
  CHECK(std::none_of(a100.fields.begin(), a100.fields.end(), [](const FieldSensitivity& f) { return f.field == "attention"; }));
  // An H100 in bf16: the NeMo and PyTorch FSDP fits, and the attention core by published kernel.
  spec.gpu_model = "H100 80GB SXM5";
  spec.workload.efficiency.gemm = 0.5775;
  spec.workload.gpu_peak_flops = 989e12;
  const StepSensitivity h100 = step_sensitivity(spec, 8, 0, cache);
  std::vector<std::string> stacks, kernels;
  for (const SensitivityPoint& p : field(h100, "gemm").points) stacks.push_back(p.value);
  for (const SensitivityPoint& p : field(h100, "attention").points) kernels.push_back(p.value);
  CHECK(stacks.size() == 2);
  CHECK(stacks[1].find("PyTorch FSDP") != std::string::npos);
  REQUIRE(kernels.size() == 5);  // as the layers, Triton (a stack's fit), FlashAttention-2, cuDNN, -3
  CHECK(kernels[0] == "as the layers");
  CHECK(field(h100, "attention").max_s > h100.base_s);  // Triton's 17 % runs the core slower
}

TEST_CASE("step sensitivity: the range adds the assumed fields in quadrature with the model's own error", "[step][sensitivity]") {
  WorkloadSpec spec = gpt175b_spec();
  StepCache cache("");
  // Nothing assumed: the model's own error alone, the presets' median when none is used.
  const StepSensitivity stated = step_sensitivity(spec, 8, 0, cache);
  CHECK(stated.range.fields.empty());
  CHECK(stated.range.model_error > 0.05);
  CHECK(stated.range.min_s == Approx(stated.base_s / (1 + stated.range.model_error)));
  CHECK(stated.range.max_s == Approx(stated.base_s * (1 + stated.range.model_error)));
  // The schedule and the virtual stages assumed: one choice, counted once.
  spec.assumed = {{"/workload/parallel/virtual_stages", "1"}, {"/workload/parallel/schedule", "1f1b"}};
  const StepSensitivity s = step_sensitivity(spec, 8, 0, cache);
  const FieldSensitivity& vp = field(s, "virtual_stages");
  const FieldSensitivity& sched = field(s, "schedule");
  const double lo = std::min(vp.range_min_s, sched.range_min_s);
  const double e = std::log1p(s.range.model_error);
  CHECK(s.range.min_s == Approx(s.base_s * std::exp(-std::sqrt(std::pow(std::log(s.base_s / lo), 2) + e * e))));
  CHECK(s.range.min_s < lo);
  const double hi = std::max(vp.range_max_s, sched.range_max_s);  // many chunks: more stage transfers
  CHECK(s.range.max_s == Approx(s.base_s * std::exp(std::sqrt(std::pow(std::log(hi / s.base_s), 2) + e * e))));
  CHECK(s.range.fields == std::vector<std::string>{"virtual_stages", "schedule"});
  // Too few micro-batches for the stages: priced, listed, but outside the range.
  spec.assumed.push_back({"/workload/parallel/micro_batch", "1"});
  const StepSensitivity m = step_sensitivity(spec, 8, 0, cache);
  const FieldSensitivity& mb = field(m, "micro_batch");
  int outside = 0;
  for (const SensitivityPoint& p : mb.points) outside += !p.outside_range.empty();
  CHECK(outside > 0);
  CHECK(mb.range_max_s < mb.max_s);
}
