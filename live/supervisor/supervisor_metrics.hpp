#pragma once
//! The supervisor's Prometheus metrics (text exposition format 0.0.4): goodput so far, the ledger,
//! the trainer's progress and restarts, interruptions by class, health events, and per-GPU
//! readings from NVML.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "live/health/nvml_monitor.hpp"
#include "core/ledger.hpp"

namespace ctwin::live {

struct MetricsSnapshot {
  Ledger ledger;                          //!< charged up to the supervisor's last mark
  double wall_s = 0;
  std::int64_t step = -1, checkpoint_step = -1;
  int restarts = 0;
  bool trainer_up = false;
  double hang_timeout_s = 0;
  std::map<std::string, long> interruptions, health_events;
  std::vector<GpuReading> gpus;
};

std::string metrics_text(const MetricsSnapshot& s);

}  // namespace ctwin::live
