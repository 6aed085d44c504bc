#pragma once
//! Prometheus metrics of a node's supervisor (`ctwin live run`, `ctwin live agent`) and of the job
//! master, on prometheus-cpp's registry and text format, served at GET /metrics by the master's own
//! HTTP server (http_server.hpp: asynchronous on a thread of its own, a deadline for each request's
//! headers, a connection cap), bound to the address given (127.0.0.1 unless the operator says
//! otherwise), so that no scraper can hold supervision up. (prometheus-cpp's exposer ran civetweb
//! on 4 threads: 200 slow clients blocked every scrape.)
//!
//! Counters never decrease, so `rate()` holds across restores: `ctwin_ledger_seconds_total` counts
//! each category's time as it was charged, and the productive time a restore rolled back is
//! counted again in `ctwin_rolled_back_seconds_total` (the ledger's productive = the counter's
//! productive - rolled back; its lost progress = the counter's + rolled back). Every series has the
//! labels job, node and host (a scrape config keeps `job` with `honor_labels: true`).
//! Without prometheus-cpp (a bare GPU machine) the constructor throws and the run goes on unmeasured.

#include <array>
#include <cstdint>
#include <optional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ledger.hpp"
#include "live/health/nvml_monitor.hpp"

namespace ctwin::live {

struct MetricsSnapshot {
  bool with_ledger = true;                //!< false: an agent's (the job's ledger is the master's); no ledger series
  Ledger ledger;                          //!< charged up to the last mark
  double uncharged_s = 0;                 //!< since the last mark: not yet in any category (a job stuck starting shows here)
  Micros rolled_back_us = 0;              //!< productive time moved to lost progress by restores, in all
  double wall_s = 0;
  std::int64_t step = -1, checkpoint_step = -1;
  int restarts = 0;
  bool trainer_up = false;
  double hang_timeout_s = -1;             //!< < 0: not shown (the master)
  std::map<std::string, long> interruptions, health_events;
  std::vector<GpuReading> gpus;
  std::vector<GpuIdentity> gpu_identities;  //!< by GPU index, where known: labels of the GPU series
  // The master's: the generation and the nodes by state (empty: not shown).
  std::int64_t generation = -1;
  std::map<std::string, int> nodes;
  int spares = -1;
  //! By node rank: seconds since the master last heard its agent (a silence building up shows here first).
  std::map<int, double> report_age_s;
  //! The master's --forecast: goodput so far, and the rest of the run's p5, p50, p95.
  struct Forecast {
    double goodput_to_date = 0;
    std::array<double, 3> remaining_wall_s{}, final_goodput{}, interruptions_per_day{};
  };
  std::optional<Forecast> forecast;
  //! The master's: nodes whose checkpoint persist fails now (a full disk, a quota, I/O), and the
  //! storage alerts raised so far (each node's start of a failing spell); -1: not shown.
  int storage_failing_nodes = -1;
  long storage_alerts = -1;
};

struct MetricsLabels {
  std::string job = "ctwin", node, host;
};

class LiveMetrics {
 public:
  //! Serves on `host:port` (port 0: any free one). Throws std::runtime_error when it cannot.
  LiveMetrics(const std::string& host, int port, const MetricsLabels& labels);
  ~LiveMetrics();
  LiveMetrics(const LiveMetrics&) = delete;
  LiveMetrics& operator=(const LiveMetrics&) = delete;
  int port() const;
  void publish(const MetricsSnapshot& s);

 private:
  struct State;
  static void publish_ledger(State& m, const MetricsSnapshot& s);
  std::unique_ptr<State> state_;
};

//! The ctwin version the metrics' ctwin_build_info names.
const char* ctwin_version();

}  // namespace ctwin::live
