#include "sim/step_sensitivity.hpp"

#include <algorithm>
#include <cmath>

#include "models/efficiency_presets.hpp"

#include "models/layout_variants.hpp"

namespace ctwin {

namespace {

//! The variant's step, simulating only the collectives whose sizes or groups differ from the
//! base's: a collective's time depends on its bytes and its groups, and the groups on the degrees
//! and the rank order alone.
StepBreakdown resimulated(const WorkloadSpec& base, const WorkloadSpec& changed, const Collectives& known) {
  const ParallelLayout& a = base.workload.layout;
  const ParallelLayout& b = changed.workload.layout;
  const bool same_groups = a.rank_order == b.rank_order && a.tp == b.tp && a.pp == b.pp && a.dp == b.dp && a.cp == b.cp && a.ep == b.ep;
  CollectiveSet which;
  if (same_groups) {
    const WorkloadCosts x = workload_costs(base.workload), y = workload_costs(changed.workload);
    which = {x.tp_bytes != y.tp_bytes, x.pp_bytes != y.pp_bytes, x.dp_bytes != y.dp_bytes, x.ep_bytes != y.ep_bytes, x.cp_bytes != y.cp_bytes};
  }
  const Workload& w = changed.workload;
  const Collectives k = simulate_collectives(w, changed.fabric, {}, changed.dp_algorithm, which, known);
  return assemble_step(w, k, 1.0, StepState{}.timeout_s);
}

}  // namespace

StepSensitivity step_sensitivity(const WorkloadSpec& spec, int gpus_per_node, double gpu_memory_bytes, StepCache& cache) {
  StepSensitivity out;
  const StepBreakdown base = cache.get(spec, {});
  out.base_s = base.step_s;
  const Collectives base_collectives = collectives_of(base);
  std::vector<LayoutField> fields = plausible_layouts(spec.workload, gpus_per_node, gpu_memory_bytes);
  for (LayoutField& f : plausible_efficiencies(spec.workload, spec.gpu_model)) fields.push_back(std::move(f));
  for (const LayoutField& field : fields) {
    FieldSensitivity f{field.name, field.pointers, false, field.base_value, {}, base.step_s, base.step_s, field.base_value, field.base_value};
    for (const std::string& pointer : field.pointers)
      for (const Assumption& a : spec.assumed) f.assumed |= a.pointer == pointer;
    for (const LayoutVariant& v : field.variants) {
      SensitivityPoint point{v.value, 0, v.excluded};
      if (v.excluded.empty()) {
        WorkloadSpec changed = spec;
        changed.workload = v.workload;
        const StepBreakdown b = field.same_collectives ? assemble_step(v.workload, base_collectives, 1.0, StepState{}.timeout_s)
                                                       : cache.get(changed, {}, [&] { return resimulated(spec, changed, base_collectives); });
        if (b.hung) point.excluded = "a collective cannot run on the healthy fabric";
        else point.step_s = b.step_s;
      }
      if (point.excluded.empty() && field.name == "micro_batch" && v.workload.layout.pp > 1) {
        // Fewer micro-batches than stages leave no steady state: no tuned run chooses it.
        const WorkloadCosts c = workload_costs(v.workload);
        if (c.micro_batches < v.workload.layout.pp) point.outside_range = "fewer micro-batches a step than pipeline stages";
      }
      if (!point.excluded.empty()) ++f.refused;
      if (point.excluded.empty() && point.outside_range.empty()) {
        f.range_min_s = f.range_min_s > 0 ? std::min(f.range_min_s, point.step_s) : point.step_s;
        f.range_max_s = std::max(f.range_max_s, point.step_s);
      }
      if (point.excluded.empty()) {
        if (point.step_s < f.min_s) f.min_s = point.step_s, f.fastest = v.value;
        if (point.step_s > f.max_s) f.max_s = point.step_s, f.slowest = v.value;
      }
      f.points.push_back(std::move(point));
    }
    out.fields.push_back(std::move(f));
  }
  out.over_assumed = std::any_of(out.fields.begin(), out.fields.end(), [](const FieldSensitivity& f) { return f.assumed; });
  auto envelope = [&](bool assumed_only, double& lo, double& hi, std::string& most) {
    lo = hi = base.step_s;
    double widest = 0;
    for (const FieldSensitivity& f : out.fields) {
      if (assumed_only && !f.assumed) continue;
      lo = std::min(lo, f.min_s);
      hi = std::max(hi, f.max_s);
      if (f.max_s - f.min_s > widest) widest = f.max_s - f.min_s, most = f.field;
    }
  };
  envelope(out.over_assumed, out.min_s, out.max_s, out.most);
  envelope(false, out.min_all_s, out.max_all_s, out.most_all);
  // The range: the assumed fields' farthest values in quadrature, with the model's own error.
  StepRange& r = out.range;
  r.point_s = base.step_s;
  const EfficiencyPreset* preset = find_efficiency_preset(spec.efficiency_preset);
  r.model_error = preset ? preset->predicted_error : typical_predicted_error();
  r.model_error_source = preset ? "preset " + preset->name : "the presets' median (no preset used)";
  // The virtual stages and the schedule are one choice (how the pipeline runs): their envelope
  // counts once.
  std::vector<std::pair<std::string, std::pair<double, double>>> choices;
  for (const FieldSensitivity& f : out.fields) {
    if (!f.assumed || f.range_max_s <= 0 || base.step_s <= 0) continue;
    const std::string choice = f.field == "virtual_stages" ? "schedule" : f.field;
    auto it = std::find_if(choices.begin(), choices.end(), [&](const auto& c) { return c.first == choice; });
    if (it == choices.end()) it = choices.insert(choices.end(), {choice, {base.step_s, base.step_s}});
    it->second.first = std::min(it->second.first, f.range_min_s);
    it->second.second = std::max(it->second.second, f.range_max_s);
    if (f.range_max_s > f.range_min_s) r.fields.push_back(f.field);
  }
  double down = std::pow(std::log1p(r.model_error), 2), up = down;
  for (const auto& [choice, span] : choices) {
    down += std::pow(std::log(base.step_s / span.first), 2);
    up += std::pow(std::log(span.second / base.step_s), 2);
  }
  r.min_s = base.step_s * std::exp(-std::sqrt(down));
  r.max_s = base.step_s * std::exp(std::sqrt(up));
  return out;
}

}  // namespace ctwin
