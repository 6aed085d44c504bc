#include "live/job/live_metrics.hpp"

#include <stdexcept>

#include "core/command_line.hpp"

#ifdef CTWIN_HAVE_PROMETHEUS
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "live/job/http_server.hpp"
#endif

#ifndef CTWIN_VERSION
#define CTWIN_VERSION "unknown"
#endif

namespace ctwin::live {

const char* ctwin_version() { return CTWIN_VERSION; }

#ifdef CTWIN_HAVE_PROMETHEUS

namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;

//! A counter set from a total that never decreases (the difference is added).
void advance(prometheus::Counter& counter, double total) {
  if (total > counter.Value()) counter.Increment(total - counter.Value());
}

}  // namespace

struct LiveMetrics::State {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<HttpServer> server;
  std::map<std::string, std::string> labels;
  std::map<int, prometheus::Gauge*> report_ages;  //!< by node rank: a vacated rank's gauge goes
  prometheus::Family<prometheus::Gauge>* gauges[19] = {};
  prometheus::Family<prometheus::Counter>* counters[6] = {};

  prometheus::Family<prometheus::Gauge>& gauge(int i, const char* name, const char* help) {
    if (!gauges[i]) gauges[i] = &BuildGauge().Name(name).Help(help).Labels(labels).Register(*registry);
    return *gauges[i];
  }
  prometheus::Family<prometheus::Counter>& counter(int i, const char* name, const char* help) {
    if (!counters[i]) counters[i] = &BuildCounter().Name(name).Help(help).Labels(labels).Register(*registry);
    return *counters[i];
  }
};

LiveMetrics::LiveMetrics(const std::string& host, int port, const MetricsLabels& labels) : state_(std::make_unique<State>()) {
  state_->labels = {{"job", labels.job}, {"node", labels.node}, {"host", labels.host}};
  // The master's own server (http_server.hpp): a scraper that trickles its request or never reads
  // the answer holds a socket, not a thread, and is cut at its deadline. Prometheus scrapes
  // without a token, as everywhere: the address is explicit (binding every interface warns).
  HttpLimits limits;
  limits.max_body = 0;  // a scrape is a GET
  const auto registry = state_->registry;
  try {
    state_->server = std::make_unique<HttpServer>(
        host, port, limits, [](const std::string&) { return true; },
        [registry](const HttpRequest& r) {
          if (r.method != "GET" || (r.target != "/metrics" && r.target.rfind("/metrics?", 0) != 0))
            return HttpAnswer{404, "nothing here but GET /metrics\n", "text/plain"};
          return HttpAnswer{200, prometheus::TextSerializer().Serialize(registry->Collect()), "text/plain; version=0.0.4; charset=utf-8"};
        });
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot serve metrics on " + cli::host_port_text(host, port) + ": " + e.what());
  }
  state_->gauge(0, "ctwin_build_info", "the ctwin that serves these metrics (always 1)").Add({{"version", ctwin_version()}}).Set(1);
}

LiveMetrics::~LiveMetrics() = default;

int LiveMetrics::port() const {
  return state_->server->port();
}

//! The ledger's series: the job's books (the master, or a job of one's supervisor), never an agent's.
void LiveMetrics::publish_ledger(State& m, const MetricsSnapshot& s) {
  const double charged = static_cast<double>(s.ledger.total()) / 1e6;
  const double productive = static_cast<double>(s.ledger[Category::Productive]) / 1e6;
  m.gauge(1, "ctwin_goodput_ratio", "productive share of the wall time accounted so far").Add({}).Set(charged > 0 ? productive / charged : 0);
  auto& ledger = m.counter(0, "ctwin_ledger_seconds_total", "wall time by ledger category as charged (productive includes what restores rolled back)");
  const double rolled_back = static_cast<double>(s.rolled_back_us) / 1e6;
  for (std::size_t c = 0; c < kCategoryCount; ++c) {
    double seconds = static_cast<double>(s.ledger.us[c]) / 1e6;
    if (c == static_cast<std::size_t>(Category::Productive)) seconds += rolled_back;
    if (c == static_cast<std::size_t>(Category::LostProgress)) seconds -= rolled_back;
    advance(ledger.Add({{"category", kCategoryKeys[c]}}), seconds);
  }
  m.gauge(13, "ctwin_uncharged_seconds", "wall time since the ledger's last charge, not yet in a category (a job stuck starting grows it)")
      .Add({})
      .Set(s.uncharged_s);
  advance(m.counter(1, "ctwin_rolled_back_seconds_total", "productive time that restores rolled back (lost progress)").Add({}), rolled_back);
}

void LiveMetrics::publish(const MetricsSnapshot& s) {
  State& m = *state_;
  m.gauge(2, "ctwin_wall_seconds", "seconds since the run started").Add({}).Set(s.wall_s);
  if (s.with_ledger) publish_ledger(m, s);
  m.gauge(3, "ctwin_trainer_step", "the last step the trainer finished").Add({}).Set(static_cast<double>(s.step));
  m.gauge(4, "ctwin_checkpoint_step", "the step of the last checkpoint saved").Add({}).Set(static_cast<double>(s.checkpoint_step));
  m.gauge(5, "ctwin_trainer_up", "1 while the trainer runs").Add({}).Set(s.trainer_up ? 1 : 0);
  advance(m.counter(2, "ctwin_restarts_total", "restarts of the trainer (the job, at the master)").Add({}), s.restarts);
  if (s.hang_timeout_s >= 0) m.gauge(6, "ctwin_hang_timeout_seconds", "silence after which the trainer counts as hung").Add({}).Set(s.hang_timeout_s);
  for (const auto& [name, n] : s.interruptions)
    advance(m.counter(3, "ctwin_interruptions_total", "interruptions by fault class").Add({{"class", name}}), static_cast<double>(n));
  for (const auto& [kind, n] : s.health_events)
    advance(m.counter(4, "ctwin_health_events_total", "health monitor events by kind").Add({{"kind", kind}}), static_cast<double>(n));
  if (s.generation >= 0) m.gauge(7, "ctwin_job_generation", "the job's attempt, counted by the master").Add({}).Set(static_cast<double>(s.generation));
  for (const auto& [state, n] : s.nodes) m.gauge(8, "ctwin_job_nodes", "the job's node ranks by their agent's state").Add({{"state", state}}).Set(n);
  if (s.spares >= 0) m.gauge(9, "ctwin_job_spares", "hot spares waiting").Add({}).Set(s.spares);
  if (s.storage_failing_nodes >= 0)
    m.gauge(18, "ctwin_storage_failing_nodes", "nodes whose checkpoint persist fails now (training goes on from memory)").Add({}).Set(s.storage_failing_nodes);
  if (s.storage_alerts >= 0)
    advance(m.counter(5, "ctwin_storage_alerts_total", "storage alerts: a node's persist began to fail (full disk, quota, I/O)").Add({}),
            static_cast<double>(s.storage_alerts));
  if (s.forecast) {  // the master's --forecast: each figure's p5, p50 and p95 as a percentile label
    const auto& f = *s.forecast;
    m.gauge(14, "ctwin_forecast_goodput_to_date_ratio", "the job's goodput so far, as its forecast takes it").Add({}).Set(f.goodput_to_date);
    static const char* kPercentiles[] = {"5", "50", "95"};  // not "quantile": a gauge is not a summary
    for (int q = 0; q < 3; ++q) {
      m.gauge(15, "ctwin_forecast_remaining_wall_seconds", "the forecast of the run's wall time left, by percentile").Add({{"percentile", kPercentiles[q]}}).Set(f.remaining_wall_s[q]);
      m.gauge(16, "ctwin_forecast_final_goodput_ratio", "the forecast of the run's goodput at its end, by percentile").Add({{"percentile", kPercentiles[q]}}).Set(f.final_goodput[q]);
      m.gauge(17, "ctwin_forecast_interruptions_per_day", "the job's interruption rate as its forecast has learnt it, by percentile")
          .Add({{"percentile", kPercentiles[q]}})
          .Set(f.interruptions_per_day[q]);
    }
  }
  if (!s.report_age_s.empty() || !m.report_ages.empty()) {
  auto& ages = m.gauge(12, "ctwin_job_node_report_age_seconds", "seconds since the master last heard the agent holding each node rank");
  for (auto it = m.report_ages.begin(); it != m.report_ages.end();) {  // a rank no agent holds now shows nothing
    if (s.report_age_s.count(it->first) == 0) ages.Remove(it->second), it = m.report_ages.erase(it);
    else ++it;
  }
  for (const auto& [rank, age] : s.report_age_s) {
    auto& gauge = ages.Add({{"rank", std::to_string(rank)}});
    gauge.Set(age);
    m.report_ages[rank] = &gauge;
  }
  }
  for (std::size_t g = 0; g < s.gpus.size(); ++g) {
    const GpuReading& r = s.gpus[g];
    // dcgm-exporter's label names (UUID, pci_bus_id; its modelName in snake case, as promtool asks), so
    // that `on (UUID)` joins the two exporters' series.
    std::map<std::string, std::string> gpu{{"gpu", std::to_string(g)}};
    if (g < s.gpu_identities.size())
      for (const auto& [label, value] : {std::pair{"UUID", s.gpu_identities[g].uuid}, std::pair{"pci_bus_id", s.gpu_identities[g].pci_bus_id},
                                         std::pair{"model_name", s.gpu_identities[g].model}})
        if (!value.empty()) gpu[label] = value;
    auto with = [&](const char* kind) {
      auto labels = gpu;
      labels["kind"] = kind;
      return labels;
    };
    m.gauge(10, "ctwin_gpu_lost", "1 when NVML says the GPU is lost").Add(gpu).Set(r.lost);
    auto& readings = m.gauge(11, "ctwin_gpu_reading", "NVML readings by kind (volatile ECC counts, remap pending, temperature, SM clock ratio, clock event reasons)");
    readings.Add(with("ecc_corrected")).Set(static_cast<double>(r.ecc_corrected));
    readings.Add(with("ecc_uncorrected")).Set(static_cast<double>(r.ecc_uncorrected));
    readings.Add(with("remap_pending")).Set(r.remap_pending ? 1 : 0);
    readings.Add(with("temperature_celsius")).Set(r.temperature_c);
    readings.Add(with("sm_clock_ratio")).Set(r.sm_max_mhz ? static_cast<double>(r.sm_clock_mhz) / r.sm_max_mhz : 0);
    readings.Add(with("clock_event_reasons")).Set(static_cast<double>(r.throttle_reasons));
  }
}

#else

struct LiveMetrics::State {};
LiveMetrics::LiveMetrics(const std::string&, int, const MetricsLabels&) {
  throw std::runtime_error("built without prometheus-cpp (Debian's prometheus-cpp-dev)");
}
LiveMetrics::~LiveMetrics() = default;
int LiveMetrics::port() const { return -1; }
void LiveMetrics::publish(const MetricsSnapshot&) {}

#endif

}  // namespace ctwin::live
