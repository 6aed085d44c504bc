#include "live/supervisor/supervisor_metrics.hpp"

#include <cstdio>

namespace ctwin::live {

namespace {

class Exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    text_ += std::string("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n';
  }
  void sample(const std::string& name, double value, const std::string& labels = "") {
    char number[64];
    std::snprintf(number, sizeof number, "%.17g", value);
    text_ += name + (labels.empty() ? "" : "{" + labels + "}") + ' ' + number + '\n';
  }
  std::string text() const { return text_; }

 private:
  std::string text_;
};

std::string label(const char* key, const std::string& value) {
  std::string escaped;
  for (char c : value) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c == '\n' ? ' ' : c;
  }
  return std::string(key) + "=\"" + escaped + "\"";
}

}  // namespace

std::string metrics_text(const MetricsSnapshot& s) {
  Exposition e;
  const double charged = static_cast<double>(s.ledger.total()) / 1e6;
  const double productive = static_cast<double>(s.ledger[Category::Productive]) / 1e6;
  e.family("ctwin_goodput_ratio", "gauge", "productive share of the wall time accounted so far");
  e.sample("ctwin_goodput_ratio", charged > 0 ? productive / charged : 0);
  e.family("ctwin_wall_seconds", "gauge", "seconds since the supervisor started");
  e.sample("ctwin_wall_seconds", s.wall_s);
  e.family("ctwin_ledger_seconds", "counter", "wall time by ledger category (as the simulator's report)");
  for (std::size_t c = 0; c < kCategoryCount; ++c)
    e.sample("ctwin_ledger_seconds", static_cast<double>(s.ledger.us[c]) / 1e6, label("category", kCategoryKeys[c]));
  e.family("ctwin_trainer_step", "gauge", "the last step the trainer finished");
  e.sample("ctwin_trainer_step", static_cast<double>(s.step));
  e.family("ctwin_checkpoint_step", "gauge", "the step of the last checkpoint saved");
  e.sample("ctwin_checkpoint_step", static_cast<double>(s.checkpoint_step));
  e.family("ctwin_trainer_up", "gauge", "1 while a trainer process runs");
  e.sample("ctwin_trainer_up", s.trainer_up ? 1 : 0);
  e.family("ctwin_trainer_restarts_total", "counter", "restarts of the trainer");
  e.sample("ctwin_trainer_restarts_total", s.restarts);
  e.family("ctwin_hang_timeout_seconds", "gauge", "silence after which the trainer counts as hung");
  e.sample("ctwin_hang_timeout_seconds", s.hang_timeout_s);
  e.family("ctwin_interruptions_total", "counter", "interruptions by fault class");
  for (const auto& [name, n] : s.interruptions) e.sample("ctwin_interruptions_total", static_cast<double>(n), label("class", name));
  e.family("ctwin_health_events_total", "counter", "health monitor events by kind");
  for (const auto& [kind, n] : s.health_events) e.sample("ctwin_health_events_total", static_cast<double>(n), label("kind", kind));
  if (s.gpus.empty()) return e.text();
  e.family("ctwin_gpu_lost", "gauge", "1 when NVML says the GPU is lost");
  for (std::size_t g = 0; g < s.gpus.size(); ++g) e.sample("ctwin_gpu_lost", s.gpus[g].lost, label("gpu", std::to_string(g)));
  e.family("ctwin_gpu_ecc_errors", "gauge", "volatile ECC error counts");
  for (std::size_t g = 0; g < s.gpus.size(); ++g) {
    e.sample("ctwin_gpu_ecc_errors", static_cast<double>(s.gpus[g].ecc_corrected), label("gpu", std::to_string(g)) + "," + label("type", "corrected"));
    e.sample("ctwin_gpu_ecc_errors", static_cast<double>(s.gpus[g].ecc_uncorrected), label("gpu", std::to_string(g)) + "," + label("type", "uncorrected"));
  }
  e.family("ctwin_gpu_remap_pending", "gauge", "1 when a row remap waits for a GPU reset");
  for (std::size_t g = 0; g < s.gpus.size(); ++g) e.sample("ctwin_gpu_remap_pending", s.gpus[g].remap_pending ? 1 : 0, label("gpu", std::to_string(g)));
  e.family("ctwin_gpu_temperature_celsius", "gauge", "GPU temperature");
  for (std::size_t g = 0; g < s.gpus.size(); ++g) e.sample("ctwin_gpu_temperature_celsius", s.gpus[g].temperature_c, label("gpu", std::to_string(g)));
  e.family("ctwin_gpu_sm_clock_ratio", "gauge", "SM clock over its maximum");
  for (std::size_t g = 0; g < s.gpus.size(); ++g)
    e.sample("ctwin_gpu_sm_clock_ratio", s.gpus[g].sm_max_mhz ? static_cast<double>(s.gpus[g].sm_clock_mhz) / s.gpus[g].sm_max_mhz : 0,
             label("gpu", std::to_string(g)));
  e.family("ctwin_gpu_clock_event_reasons", "gauge", "NVML clock event (throttle) reason bits");
  for (std::size_t g = 0; g < s.gpus.size(); ++g)
    e.sample("ctwin_gpu_clock_event_reasons", static_cast<double>(s.gpus[g].throttle_reasons), label("gpu", std::to_string(g)));
  return e.text();
}

}  // namespace ctwin::live
