#include "sim/step_sensitivity.hpp"

#include <algorithm>

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
  for (const LayoutField& field : plausible_layouts(spec.workload, gpus_per_node, gpu_memory_bytes)) {
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
  return out;
}

}  // namespace ctwin
