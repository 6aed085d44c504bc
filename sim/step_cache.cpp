#include "sim/step_cache.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/scenario_loader.hpp"
#include "sim/report/atomic_file.hpp"

namespace ctwin {

namespace {

constexpr int kStepModelVersion = 1;  //!< bump when the step model's answers change

nlohmann::json breakdown_json(const StepBreakdown& b) {
  return {{"step_s", b.step_s},           {"compute_s", b.compute_s},     {"bubble_s", b.bubble_s},
          {"tp_exposed_s", b.tp_exposed_s}, {"pp_exposed_s", b.pp_exposed_s}, {"dp_exposed_s", b.dp_exposed_s},
          {"tp_collective_s", b.tp_collective_s}, {"pp_transfer_s", b.pp_transfer_s},
          {"dp_collective_s", b.dp_collective_s}, {"tokens_per_s", b.tokens_per_s}, {"mfu", b.mfu},
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
  b.tp_collective_s = j.at("tp_collective_s");
  b.pp_transfer_s = j.at("pp_transfer_s");
  b.dp_collective_s = j.at("dp_collective_s");
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
  out << "v" << kStepModelVersion << " model " << m.layers << ' ' << m.hidden << ' ' << m.heads << ' ' << m.ffn_hidden << ' '
      << m.gated_mlp << ' ' << m.vocab << ' ' << m.seq_len << ' ' << m.experts << ' ' << m.top_k << " layout " << l.tp << ' '
      << l.pp << ' ' << l.dp << ' ' << l.cp << ' ' << l.ep << ' ' << l.virtual_stages << ' ' << l.zero_stage << ' '
      << l.micro_batch << ' ' << l.global_batch << ' ' << static_cast<int>(l.recompute) << " eff " << e.gemm << ' '
      << e.tp_overlap << ' ' << e.dp_overlap << ' ' << e.grad_bytes << ' ' << e.bandwidth << " peak " << w.gpu_peak_flops << " fabric "
      << f.gpus_per_node << ' ' << f.nvlink_bytes_per_s << ' ' << f.nvlink_latency_s << ' ' << f.nic_bytes_per_s << ' '
      << f.nic_latency_s << ' ' << f.nodes_per_leaf << ' ' << f.oversubscription << " dp " << static_cast<int>(spec.dp_algorithm)
      << " state " << state.dp_width << ' ' << state.timeout_s;
  for (const auto& [gpu, v] : state.gpu_speed) out << " s" << gpu << '=' << v;
  for (const auto& [gpu, v] : state.fabric.nic_factor) out << " n" << gpu << '=' << v;
  for (const auto& [gpu, v] : state.fabric.nvlink_factor) out << " l" << gpu << '=' << v;
  return out.str();
}

}  // namespace

StepCache::StepCache(std::string directory) : directory_(std::move(directory)) {}

std::string StepCache::default_directory() {
  if (const char* d = std::getenv("CTWIN_CACHE_DIR")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ctwin";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ctwin";
  return "";
}

StepCache& StepCache::shared() {
  static StepCache cache;
  return cache;
}

std::uint64_t StepCache::signature(const WorkloadSpec& spec, const StepState& state) {
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a 64
  for (unsigned char ch : signature_text(spec, state)) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

const StepBreakdown* StepCache::find(std::uint64_t signature) const {
  const auto it = memory_.find(signature);
  return it == memory_.end() ? nullptr : &it->second;
}

StepBreakdown StepCache::get(const WorkloadSpec& spec, const StepState& state) {
  const std::uint64_t key = signature(spec, state);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const StepBreakdown* b = find(key)) return *b;
  char name[40];
  std::snprintf(name, sizeof name, "step-%016llx.json", static_cast<unsigned long long>(key));
  const std::string path = directory_.empty() ? "" : directory_ + "/" + name;
  const std::string text = signature_text(spec, state);
  if (!path.empty()) {
    std::ifstream in(path);
    nlohmann::json j;
    if (in) {
      try {
        in >> j;
        if (j.at("signature") == text) {
          ++read_from_disk_;
          return memory_[key] = breakdown_from(j.at("step"));
        }
      } catch (const std::exception&) {
        // unreadable or stale: simulate again and overwrite it
      }
    }
  }
  const StepBreakdown b = step_time(spec.workload, spec.fabric, state,
                                    spec.dp_algorithm);
  ++simulated_;
  memory_[key] = b;
  if (!path.empty()) {
    std::error_code ignored;
    std::filesystem::create_directories(directory_, ignored);
    try {
      write_file_atomically(path, nlohmann::json{{"signature", text}, {"step", breakdown_json(b)}}.dump(1) + "\n");
    } catch (const std::exception&) {
      // a cache that cannot be written only costs time
    }
  }
  return b;
}

void resolve_step_time(Scenario& s, const std::string& file) {
  if (!s.workload || s.job.step_us > 0) return;
  const StepBreakdown b = StepCache::shared().get(*s.workload, {});
  if (b.hung) throw ScenarioInvalid(file, {{"/workload", "the healthy fabric cannot run the step's collectives"}});
  s.job.step_us = seconds_to_micros(b.step_s);
  const Workload& w = s.workload->workload;
  if (!s.job.tokens_per_step) s.job.tokens_per_step = static_cast<double>(w.layout.global_batch) * w.model.seq_len;
  if (s.job.work_steps && !s.job.work_us) s.job.work_us = static_cast<Micros>(std::llround(*s.job.work_steps * static_cast<double>(s.job.step_us)));
  // A slow part's factor is its own (a GPU's compute, a link's bandwidth); the job's speed is what
  // the step model makes of it: healthy step / step with that part slow.
  const int gpus_per_node = s.workload->fabric.gpus_per_node;
  for (FaultClass& f : s.faults) {
    if (f.effect != Effect::Slow) continue;
    StepState slowed;
    switch (f.rate.component) {
      case Component::Gpu:
      case Component::Node: slowed.gpu_speed[0] = f.speed_factor; break;
      case Component::Cable: slowed.fabric.nic_factor[0] = f.speed_factor; break;
      case Component::Leaf:  // a rail switch: every port it serves, on rail 0
        for (int node = 0; node < std::max(1, s.workload->fabric.nodes_per_leaf); ++node)
          slowed.fabric.nic_factor[node * gpus_per_node] = f.speed_factor;
        break;
      case Component::Spine: continue;  // the uplinks are shared: the scenario's factor stands
    }
    const StepBreakdown part = StepCache::shared().get(*s.workload, slowed);
    if (!part.hung && part.step_s > 0) f.speed_factor = std::min(1.0, b.step_s / part.step_s);
  }
}

}  // namespace ctwin
