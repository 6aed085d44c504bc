#include "sim/step_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/scenario_loader.hpp"
#include "core/atomic_file.hpp"
#include "sim/disk_memo.hpp"

namespace ctwin {

namespace {

constexpr int kStepModelVersion = 6;  //!< bump when the step model's answers change

nlohmann::json breakdown_json(const StepBreakdown& b) {
  return {{"step_s", b.step_s},           {"compute_s", b.compute_s},     {"bubble_s", b.bubble_s},
          {"tp_exposed_s", b.tp_exposed_s}, {"pp_exposed_s", b.pp_exposed_s}, {"dp_exposed_s", b.dp_exposed_s},
          {"ep_exposed_s", b.ep_exposed_s}, {"cp_exposed_s", b.cp_exposed_s}, {"offload_exposed_s", b.offload_exposed_s}, {"ep_collective_s", b.ep_collective_s},
          {"cp_transfer_s", b.cp_transfer_s},
          {"tp_collective_s", b.tp_collective_s}, {"pp_transfer_s", b.pp_transfer_s},
          {"dp_collective_s", b.dp_collective_s}, {"dp_traffic_s", b.dp_traffic_s}, {"tokens_per_s", b.tokens_per_s}, {"mfu", b.mfu},
          {"hung", b.hung},                 {"gpus", b.gpus}};
}

StepBreakdown breakdown_from(const nlohmann::json& j) {
  StepBreakdown b;
  b.step_s = j.at("step_s");
  b.compute_s = j.at("compute_s");
  b.bubble_s = j.at("bubble_s");
  b.tp_exposed_s = j.at("tp_exposed_s");
  b.pp_exposed_s = j.at("pp_exposed_s");
  b.dp_exposed_s = j.at("dp_exposed_s");
  b.ep_exposed_s = j.at("ep_exposed_s");
  b.cp_exposed_s = j.at("cp_exposed_s");
  b.offload_exposed_s = j.at("offload_exposed_s");
  b.ep_collective_s = j.at("ep_collective_s");
  b.cp_transfer_s = j.at("cp_transfer_s");
  b.tp_collective_s = j.at("tp_collective_s");
  b.pp_transfer_s = j.at("pp_transfer_s");
  b.dp_collective_s = j.at("dp_collective_s");
  b.dp_traffic_s = j.at("dp_traffic_s");
  b.tokens_per_s = j.at("tokens_per_s");
  b.mfu = j.at("mfu");
  b.hung = j.at("hung");
  b.gpus = j.at("gpus");
  return b;
}

std::string signature_text(const WorkloadSpec& spec, const StepState& state) {
  const Workload& w = spec.workload;
  const auto& m = w.model;
  const auto& l = w.layout;
  const auto& e = w.efficiency;
  const auto& f = spec.fabric;
  std::ostringstream out;
  out.precision(17);
  out << "v" << kStepModelVersion << " model " << m.layers << ' ' << m.hidden << ' ' << m.heads << ' ' << m.kv_heads << ' ' << m.ffn_hidden << ' '
      << m.gated_mlp << ' ' << m.vocab << ' ' << m.seq_len << ' ' << m.experts << ' ' << m.top_k << " layout " << l.tp << ' '
      << l.pp << ' ' << l.dp << ' ' << l.cp << ' ' << l.ep << ' ' << l.virtual_stages << ' ' << l.zero_stage << ' '
      << l.micro_batch << ' ' << l.global_batch << ' ' << static_cast<int>(l.recompute) << ' ' << l.embedding_as_layer << ' '
      << l.loss_as_layer << ' ' << l.sequence_parallel << ' ' << static_cast<int>(l.cp_algorithm) << " schedule "
      << static_cast<int>(l.schedule) << ' ' << l.contiguous_micro_batches << " offload " << l.activation_offload << ' ' << w.host_bandwidth << " order";
  for (RankDim d : l.rank_order) out << ' ' << static_cast<int>(d);
  out << " stages";
  for (int n : l.stage_layers) out << ' ' << n;
  out << " eff " << e.gemm << ' ' << e.gemm_half_hidden << ' ' << e.attention << ' ' << e.attention_half_seq << ' ' << e.attention_backward << ' ' << e.attention_backward_half_seq << ' '
      << e.tp_overlap << ' ' << e.dp_overlap << ' ' << e.ep_overlap << ' ' << e.cp_overlap << ' ' << e.grad_bytes << ' ' << e.bandwidth << " peak " << w.gpu_peak_flops << ' ' << w.gemm_peak_flops << " attention " << static_cast<int>(w.attention) << " fabric "
      << f.gpus_per_node << ' ' << f.nvlink_bytes_per_s << ' ' << f.nvlink_latency_s << ' ' << f.nic_bytes_per_s << ' '
      << f.nic_latency_s << ' ' << f.nodes_per_leaf << ' ' << f.oversubscription << " dp " << static_cast<int>(spec.dp_algorithm)
      << " state " << state.dp_width << ' ' << state.timeout_s << ' ' << state.fabric.uplink_factor;
  for (const auto& [gpu, v] : state.gpu_speed) out << " s" << gpu << '=' << v;
  for (const auto& [gpu, v] : state.fabric.nic_factor) out << " n" << gpu << '=' << v;
  for (const auto& [gpu, v] : state.fabric.nvlink_factor) out << " l" << gpu << '=' << v;
  return out.str();
}

}  // namespace

StepCache::StepCache(std::string directory) : directory_(std::move(directory)) {}

std::string StepCache::default_directory() { return default_cache_directory(); }

StepCache& StepCache::shared() {
  static StepCache cache;
  return cache;
}

std::uint64_t StepCache::signature(const WorkloadSpec& spec, const StepState& state) {
  return fnv1a64(signature_text(spec, state));
}

const StepBreakdown* StepCache::find(std::uint64_t signature) const {
  const auto it = memory_.find(signature);
  return it == memory_.end() ? nullptr : &it->second;
}

StepBreakdown StepCache::get(const WorkloadSpec& spec, const StepState& state) {
  return get(spec, state, [&] { return step_time(spec.workload, spec.fabric, state, spec.dp_algorithm); });
}

StepBreakdown StepCache::get(const WorkloadSpec& spec, const StepState& state, const std::function<StepBreakdown()>& compute) {
  const std::uint64_t key = signature(spec, state);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const StepBreakdown* b = find(key)) return *b;
  const DiskMemo disk(directory_, "step");
  const std::string text = signature_text(spec, state);
  if (const auto answer = disk.read(text)) {
    try {
      const StepBreakdown b = breakdown_from(*answer);
      ++read_from_disk_;
      return memory_[key] = b;
    } catch (const std::exception&) {
      // stale: simulated again and overwritten
    }
  }
  const StepBreakdown b = compute();
  ++simulated_;
  memory_[key] = b;
  disk.write(text, breakdown_json(b));
  return b;
}

std::vector<double> StepCache::speeds_at_widths(const WorkloadSpec& spec, const std::vector<int>& widths, int anchors) {
  const int full = spec.workload.layout.dp;
  std::vector<int> sorted(widths);
  sorted.push_back(full);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  // Anchors: every width when few, else geometric steps from the narrowest to the full width.
  std::map<int, Collectives> at;
  const int lo = std::max(1, sorted.front());
  const int n = std::max(2, anchors);
  for (int i = 0; i < n; ++i) {
    const double target = static_cast<double>(sorted.size()) <= n ? sorted[std::min<std::size_t>(i, sorted.size() - 1)]
                                                                     : lo * std::pow(static_cast<double>(full) / lo, i / (n - 1.0));
    const int width = *std::min_element(sorted.begin(), sorted.end(), [target](int a, int b) { return std::abs(a - target) < std::abs(b - target); });
    if (!at.count(width)) {
      StepState state;
      state.dp_width = width;
      at[width] = collectives_of(get(spec, state));
    }
  }
  const double full_rate = assemble_step(spec.workload, at.at(full), 1.0, StepState{}.timeout_s).tokens_per_s;
  std::vector<double> speeds;
  for (int width : widths) {
    auto hi = at.lower_bound(width);
    Collectives k = hi->second;
    if (hi->first != width && hi != at.begin()) {
      const auto below = std::prev(hi);
      const double t = static_cast<double>(width - below->first) / (hi->first - below->first);
      const Collectives& a = below->second;
      const Collectives& b = hi->second;
      auto mix = [t](double x, double y) { return x + t * (y - x); };
      k = {mix(a.tp_s, b.tp_s), mix(a.pp_s, b.pp_s), mix(a.dp_s, b.dp_s), mix(a.ep_s, b.ep_s), mix(a.cp_s, b.cp_s), a.hung || b.hung};
    }
    const StepBreakdown step = assemble_step(at_width(spec.workload, width), k, 1.0, StepState{}.timeout_s);
    speeds.push_back(full_rate > 0 ? step.tokens_per_s / full_rate : 0);
  }
  return speeds;
}

void resolve_step_time(Scenario& s, const std::string& file) {
  if (!s.workload) return;
  const StepBreakdown b = StepCache::shared().get(*s.workload, {});
  if (b.hung) throw ScenarioInvalid(file, {{"/workload", "the healthy fabric cannot run the step's collectives"}});
  // A stated step time (a published one) stands; the workload still gives the traffic and the
  // slow parts' ratios below, so one fabric model serves the step and the trial.
  s.job.modelled_step_us = seconds_to_micros(b.step_s);
  if (s.job.step_us <= 0) s.job.step_us = s.job.modelled_step_us;
  if (s.job.traffic_us == 0) {  // what a checkpoint on the compute fabric competes with
    // Its bytes and link set its time, whatever the stated step (it cannot outlast the step).
    const ScaleOutTraffic t = scale_out_traffic(s.workload->workload, b, s.workload->fabric.gpus_per_node);
    s.job.traffic_us = std::min(s.job.step_us, seconds_to_micros(t.total_s()));
    s.job.traffic_exposed_us = std::min(s.job.traffic_us, seconds_to_micros(t.exposed_s));
  }
  const Workload& w = s.workload->workload;
  if (!s.job.tokens_per_step) s.job.tokens_per_step = static_cast<double>(w.layout.global_batch) * w.model.seq_len;
  if (s.job.work_steps && !s.job.work_us) {
    if (*s.job.work_steps * micros_to_seconds(s.job.step_us) > kLongestSeconds)
      throw ScenarioInvalid(file, {{"/job/steps", "is more work than any simulation can hold at the workload's step time"}});
    s.job.work_us = seconds_to_micros(*s.job.work_steps * micros_to_seconds(s.job.step_us));
  }
  // A slow part's factor is its own (a GPU's compute, a link's bandwidth); the job's speed is what
  // the step model makes of it: healthy step / step with that part slow.
  const int gpus_per_node = s.workload->fabric.gpus_per_node;
  for (FaultClass& f : s.faults) {
    if (f.effect != Effect::Slow) continue;
    StepState slowed;
    switch (f.rate.component) {
      case Component::Gpu:
        if (f.slows == SlowedPart::NvLink) slowed.fabric.nvlink_factor[0] = f.speed_factor;  // lanes down
        else if (f.slows == SlowedPart::Nic) slowed.fabric.nic_factor[0] = f.speed_factor;
        else slowed.gpu_speed[0] = f.speed_factor;
        break;
      case Component::Node: slowed.gpu_speed[0] = f.speed_factor; break;
      case Component::Cable: slowed.fabric.nic_factor[0] = f.speed_factor; break;
      case Component::Leaf:  // a rail switch: every port it serves, on rail 0
        for (int node = 0; node < std::max(1, s.workload->fabric.nodes_per_leaf); ++node)
          slowed.fabric.nic_factor[node * gpus_per_node] = f.speed_factor;
        break;
      case Component::NvSwitch:  // a tray of the domain: every GPU's NVLink has that share left
        for (int g = 0; g < gpus_per_node; ++g) slowed.fabric.nvlink_factor[g] = f.speed_factor;
        break;
      case Component::Spine:  // shared by every leaf: the factor is the cross-leaf bandwidth left
        if (s.workload->fabric.nodes_per_leaf <= 0) continue;  // no spine hop modelled: the factor stands
        slowed.fabric.uplink_factor = f.speed_factor;
        break;
    }
    const StepBreakdown part = StepCache::shared().get(*s.workload, slowed);
    if (!part.hung && part.step_s > 0) f.speed_factor = std::min(1.0, b.step_s / part.step_s);
  }
  // A shrunk job keeps the global batch: its speed at each width comes from the step model too.
  if (s.elastic.shrink) {
    const ParallelLayout& l = w.layout;
    const int replicas = s.job.nodes / std::max(1, s.elastic.replica_nodes);
    const int dp_per_replica = l.dp / std::max(1, replicas);
    std::vector<int> widths;
    for (int a = s.elastic.min_replicas; a <= replicas; ++a) widths.push_back(a * dp_per_replica);
    const std::vector<double> speeds = StepCache::shared().speeds_at_widths(*s.workload, widths);
    s.elastic.speed_by_replicas.assign(static_cast<std::size_t>(replicas) + 1, 0.0);
    for (std::size_t i = 0; i < widths.size(); ++i)
      s.elastic.speed_by_replicas[static_cast<std::size_t>(s.elastic.min_replicas) + i] = speeds[i];
  }
}

}  // namespace ctwin
