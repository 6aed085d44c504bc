#include "report/step_report.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "report/run_report.hpp"
#include "models/efficiency_presets.hpp"
#include "models/memory.hpp"

namespace ctwin {

namespace {

std::string seconds_text(double s) {
  char out[32];
  std::snprintf(out, sizeof out, s >= 1 ? "%.3f s" : "%.3f ms", s >= 1 ? s : s * 1e3);
  return out;
}

}  // namespace

std::string step_range_text(const StepRange& r) {
  std::string fields;
  for (const std::string& f : r.fields) fields += (fields.empty() ? "" : ", ") + f;
  char model[160];
  std::snprintf(model, sizeof model, "the model's own %.1f %% (%s)", 100 * r.model_error, r.model_error_source.c_str());
  return seconds_text(r.min_s) + " .. " + seconds_text(r.max_s) + " over " +
         (fields.empty() ? std::string(model) + " (nothing assumed moves it)" : "what was assumed (" + fields + ") and " + model);
}

std::string step_text(const Scenario& s, const StepBreakdown& b, int dp_width, const StepRange* range) {
  std::ostringstream out;
  const auto& l = s.workload->workload.layout;
  out << "ctwin step: " << s.name << "  (" << b.gpus << " GPUs: tp " << l.tp << " x pp " << l.pp << " x dp "
            << (dp_width > 0 ? dp_width : l.dp) << " x cp " << l.cp << ", global batch " << l.global_batch << ")\n";
  if (const auto* preset = find_efficiency_preset(s.workload->efficiency_preset)) {
    const Efficiency& e = s.workload->workload.efficiency;
    char line[400];
    std::snprintf(line, sizeof line, "  efficiencies from preset %s, %s (GEMM %.3f, bandwidth %.3f, TP/DP overlap %.3f/%.3f): %s\n",
                  preset->name.c_str(), preset->stack.c_str(), e.gemm, e.bandwidth, e.tp_overlap, e.dp_overlap, preset->source.c_str());
    out << line;
  }
  out << "\n";
  if (b.hung) {
    out << "  HUNG: a collective crosses a dead port; the watchdog fires after " << seconds_text(b.step_s) << "\n";
  } else {
    auto row = [&](const char* what, double v) {
      char line[120];
      std::snprintf(line, sizeof line, "    %-28s %12s  %6.2f %%\n", what, seconds_text(v).c_str(), 100 * v / b.step_s);
      out << line;
    };
    char rates[160];  // a throughput in whole tokens with thousands apart, MFU to a tenth: the digits that mean something
    std::snprintf(rates, sizeof rates, "\n  tokens per s     %s\n  MFU              %.1f %%\n\n  breakdown\n", thousands(std::llround(b.tokens_per_s)).c_str(),
                  100 * b.mfu);
    out << "  step time        " << seconds_text(b.step_s) << (range ? " as given and assumed" : "");
    if (range) out << "\n  range            " << step_range_text(*range);
    out << rates;
    row("compute", b.compute_s);
    row("pipeline bubble", b.bubble_s);
    row("tensor-parallel exposed", b.tp_exposed_s);
    row("pipeline transfers exposed", b.pp_exposed_s);
    row("data-parallel exposed", b.dp_exposed_s);
    if (l.ep > 1) row("expert all-to-alls exposed", b.ep_exposed_s);
    if (l.cp > 1) row("context K/V ring exposed", b.cp_exposed_s);
    if (l.activation_offload > 0) row("activation offload exposed", b.offload_exposed_s);
    out << "\n  one TP all-reduce " << seconds_text(b.tp_collective_s) << ", one stage transfer "
              << seconds_text(b.pp_transfer_s);
    if (l.zero_stage == 3 && b.dp_traffic_s != b.dp_collective_s)
      out << ", ZeRO-3's parameter gathers and gradient reduce-scatters " << seconds_text(b.dp_traffic_s) << " a step";
    else
      out << ", the gradient reduction " << seconds_text(b.dp_collective_s);
    if (l.ep > 1) out << ", one expert all-to-all " << seconds_text(b.ep_collective_s);
    if (l.cp > 1) out << ", one K/V ring step " << seconds_text(b.cp_transfer_s);
    out << "\n";
    const ScaleOutTraffic t = scale_out_traffic(s.workload->workload, b, s.workload->fabric.gpus_per_node);
    out << "  between nodes a node's link carries " << seconds_text(t.total_s()) << " a step";
    const char* sep = ": ";
    for (const auto& [kind, v] : {std::pair{"data-parallel", t.dp_s}, {"pipeline", t.pp_s}, {"context", t.cp_s}, {"expert", t.ep_s}})
      if (v > 0) out << sep << kind << " " << seconds_text(v), sep = ", ";
    out << "\n  (" << seconds_text(t.exposed_s) << " of it exposed): what a checkpoint crossing the compute fabric meets\n";
  }
  const MemoryUse mem = memory_per_gpu(s.workload->workload);
  char line[240];
  std::snprintf(line, sizeof line,
                "\n  memory per GPU   %.1f GiB on stage %d: weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f",
                mem.total() / (1 << 30), mem.stage, mem.weights / (1 << 30), mem.gradients / (1 << 30), mem.optimizer / (1 << 30),
                mem.activations / (1 << 30));
  out << line;
  if (s.cluster.gpu_memory_bytes > 0) {
    std::snprintf(line, sizeof line, " (of %.1f GiB)", s.cluster.gpu_memory_bytes / (1 << 30));
    out << line;
  }
  out << "\n" << assumptions_text(*s.workload);
  return out.str();
}

std::string assumptions_text(const WorkloadSpec& spec) {
  if (spec.assumed.empty()) return "\n  every field the step depends on is stated\n";
  std::ostringstream out;
  out << "\n  assumed (not in the scenario)\n";
  for (const Assumption& a : spec.assumed) {
    char line[240];
    std::snprintf(line, sizeof line, "    %-40s %s\n", a.pointer.c_str(), a.value.c_str());
    out << line;
  }
  return out.str();
}

std::string sensitivity_text(const StepSensitivity& x) {
  std::ostringstream out;
  auto percent = [&](double v) {
    char t[32];
    std::snprintf(t, sizeof t, "%+.1f %%", x.base_s > 0 ? 100 * (v / x.base_s - 1) : 0.0);
    return std::string(t);
  };
  out << "\n  sensitivity: each field over its plausible values, the others as given (* assumed)\n";
  int refused = 0;
  for (const FieldSensitivity& f : x.fields) {
    char head[200];
    std::snprintf(head, sizeof head, "  %c %-22s %s .. %s (%s .. %s)\n", f.assumed ? '*' : ' ', f.field.c_str(), seconds_text(f.min_s).c_str(),
                  seconds_text(f.max_s).c_str(), percent(f.min_s).c_str(), percent(f.max_s).c_str());
    out << head;
    for (const SensitivityPoint& pt : f.points) {
      if (!pt.excluded.empty()) continue;
      out << "      " << pt.value << (pt.value == f.base_value ? " (as given)" : "") << ": " << seconds_text(pt.step_s) << "  " << percent(pt.step_s)
          << (pt.outside_range.empty() ? "" : "  (not in the range: " + pt.outside_range + ")") << "\n";
    }
    if (f.refused > 0) {
      out << "      refused (" << f.refused << "):\n";
      for (const SensitivityPoint& pt : f.points)
        if (!pt.excluded.empty()) out << "        " << pt.value << ": " << pt.excluded << "\n";
    }
    if (f.assumed || !x.over_assumed) refused += f.refused;
  }
  out << "\n  step time " << seconds_text(x.base_s) << ", " << seconds_text(x.min_s) << " .. " << seconds_text(x.max_s) << " ("
      << percent(x.min_s) << " .. " << percent(x.max_s) << ") over " << (x.over_assumed ? "the assumed fields" : "these fields (every one is stated)")
      << ", one at a time";
  out << (x.most.empty() ? "; none of the values that run moves it" : "; " + x.most + " moves it most");
  if (refused > 0) out << " (" << refused << (refused == 1 ? " value" : " values") << " refused, listed apart)";
  out << "\n";
  out << "  range " << step_range_text(x.range) << "\n";
  if (x.over_assumed)
    out << "  over every field, stated ones too: " << seconds_text(x.min_all_s) << " .. " << seconds_text(x.max_all_s) << " ("
        << percent(x.min_all_s) << " .. " << percent(x.max_all_s) << ")"
        << (x.most_all.empty() ? "" : "; " + x.most_all + " moves it most") << "\n";
  return out.str();
}

std::string step_json(const Scenario& s, const StepBreakdown& b, const StepSensitivity* sensitivity, const StepRange* range) {
  nlohmann::ordered_json j{{"schema_version", 1}, {"ctwin_version", kCtwinVersion}, {"command", "step"}, {"scenario", s.name}, {"scenario_hash", s.content_hash},
                           {"gpus", b.gpus}, {"hung", b.hung}, {"step_s", b.step_s}, {"tokens_per_s", b.tokens_per_s},
                           {"mfu", b.mfu},
                           {"breakdown_s", {{"compute", b.compute_s}, {"pipeline_bubble", b.bubble_s}, {"tp_exposed", b.tp_exposed_s},
                                            {"pp_exposed", b.pp_exposed_s}, {"dp_exposed", b.dp_exposed_s},
                                            {"ep_exposed", b.ep_exposed_s}, {"cp_exposed", b.cp_exposed_s}, {"offload_exposed", b.offload_exposed_s}}},
                           {"collectives_s", {{"tp_all_reduce", b.tp_collective_s}, {"pp_transfer", b.pp_transfer_s},
                                              {"dp_gradients", b.dp_collective_s}, {"dp_traffic", b.dp_traffic_s}, {"ep_all_to_all", b.ep_collective_s},
                                              {"cp_ring_step", b.cp_transfer_s}}}};
  const ScaleOutTraffic t = scale_out_traffic(s.workload->workload, b, s.workload->fabric.gpus_per_node);
  j["scale_out_s"] = {{"dp", t.dp_s}, {"pp", t.pp_s}, {"cp", t.cp_s}, {"ep", t.ep_s}, {"total", t.total_s()}, {"exposed", t.exposed_s}};
  const MemoryUse mem = memory_per_gpu(s.workload->workload);
  j["memory_per_gpu_bytes"] = {{"stage", mem.stage},         {"weights", mem.weights},         {"gradients", mem.gradients},
                               {"optimizer", mem.optimizer}, {"activations", mem.activations}, {"total", mem.total()}};
  if (s.cluster.gpu_memory_bytes > 0) j["gpu_memory_bytes"] = s.cluster.gpu_memory_bytes;
  if (!s.workload->efficiency_preset.empty()) j["efficiency_preset"] = s.workload->efficiency_preset;
  j["assumed"] = nlohmann::ordered_json::array();
  for (const Assumption& a : s.workload->assumed) j["assumed"].push_back({{"field", a.pointer}, {"value", a.value}});
  if (range)
    j["range"] = {{"min_s", range->min_s}, {"max_s", range->max_s}, {"assumed_fields", range->fields},
                  {"model_error", range->model_error}, {"model_error_source", range->model_error_source}};
  if (sensitivity) {
    nlohmann::ordered_json fields = nlohmann::ordered_json::array();
    for (const FieldSensitivity& f : sensitivity->fields) {
      nlohmann::ordered_json points = nlohmann::ordered_json::array();
      for (const SensitivityPoint& pt : f.points) {
        nlohmann::ordered_json one{{"value", pt.value}};
        if (pt.excluded.empty()) one["step_s"] = pt.step_s;
        else one["excluded"] = pt.excluded;
        if (!pt.outside_range.empty()) one["outside_range"] = pt.outside_range;
        points.push_back(one);
      }
      fields.push_back({{"field", f.field}, {"pointers", f.pointers}, {"assumed", f.assumed}, {"as_given", f.base_value},
                        {"min_s", f.min_s}, {"max_s", f.max_s}, {"fastest", f.fastest}, {"slowest", f.slowest}, {"refused", f.refused}, {"values", points}});
    }
    j["sensitivity"] = {{"step_s", sensitivity->base_s}, {"min_s", sensitivity->min_s}, {"max_s", sensitivity->max_s},
                        {"over", sensitivity->over_assumed ? "assumed" : "all"}, {"most", sensitivity->most},
                        {"all_fields", {{"min_s", sensitivity->min_all_s}, {"max_s", sensitivity->max_all_s}, {"most", sensitivity->most_all}}},
                        {"fields", fields}};
  }
  return j.dump(2) + "\n";
}

}  // namespace ctwin
