#include "live/health/nvml_monitor.hpp"

#include <cstdio>
#include <cstring>

namespace ctwin::live {

namespace {

constexpr const char* kLinkCounterNames[nvml::kNvLinkErrorCounters] = {"replay", "recovery", "crc_flit", "crc_data"};
constexpr unsigned long long kSlowingReasons = nvml::kThrottleSwPowerCap | nvml::kThrottleHwSlowdown | nvml::kThrottleSwThermal |
                                               nvml::kThrottleHwThermal | nvml::kThrottleHwPowerBrake;

HealthEvent event(Symptom symptom, int gpu, std::string detail, int xid = -1, double value = 0) {
  return {std::chrono::steady_clock::now(), symptom, gpu, xid, value, std::move(detail), "nvml"};
}

std::string plus(const char* what, unsigned long long delta) { return std::string(what) + "=+" + std::to_string(delta); }

//! (domain, bus, device) of "0000:3b:00", "00000000:3B:00.0" or "3b:00".
bool parse_bus_id(const std::string& text, unsigned& domain, unsigned& bus, unsigned& device) {
  unsigned function = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) >= 3) return true;
  domain = 0;
  return std::sscanf(text.c_str(), "%x:%x", &bus, &device) == 2;
}

}  // namespace

int gpu_of_bus_id(const std::vector<std::string>& bus_ids, const std::string& pci) {
  unsigned d, b, v;
  if (!parse_bus_id(pci, d, b, v)) return -1;
  for (std::size_t i = 0; i < bus_ids.size(); ++i) {
    unsigned d2, b2, v2;
    if (parse_bus_id(bus_ids[i], d2, b2, v2) && d == d2 && b == b2 && v == v2) return static_cast<int>(i);
  }
  return -1;
}

NvmlMonitor::NvmlMonitor(std::shared_ptr<const nvml::Api> api, NvmlMonitorOptions options)
    : api_(std::move(api)), options_(options) {}

NvmlMonitor::~NvmlMonitor() {
  if (events_ && api_->event_set_free) api_->event_set_free(events_);
}

std::unique_ptr<NvmlMonitor> NvmlMonitor::open(const NvmlMonitorOptions& options, std::string& why) {
  auto api = nvml::load(why);
  if (!api) return nullptr;
  std::unique_ptr<NvmlMonitor> m(new NvmlMonitor(api, options));
  unsigned count = 0;
  if (const auto r = api->device_count(&count); r != nvml::kSuccess || count == 0) {
    why = r != nvml::kSuccess ? "nvmlDeviceGetCount: " + api->error(r) : "NVML sees no GPU";
    return nullptr;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvml::Device device = nullptr;
    if (const auto r = api->device_by_index(i, &device); r != nvml::kSuccess) {
      why = "nvmlDeviceGetHandleByIndex(" + std::to_string(i) + "): " + api->error(r);
      return nullptr;
    }
    nvml::PciInfo pci{};
    m->devices_.push_back(device);
    m->bus_ids_.push_back(api->pci_info && api->pci_info(device, &pci) == nvml::kSuccess ? std::string(pci.bus_id) : "");
    auto text = [&](nvml::Return (*get)(nvml::Device, char*, unsigned), unsigned size) {
      std::string out(size, '\0');
      if (!get || get(device, out.data(), size) != nvml::kSuccess) return std::string();
      out.resize(std::strlen(out.c_str()));
      return out;
    };
    m->identities_.push_back({text(api->uuid, nvml::kUuidBufferSize), m->bus_ids_.back(), text(api->name, nvml::kNameBufferSize)});
  }
  // Xid events: a GPU that does not support them is still polled.
  if (api->event_set_create && api->register_events && api->event_set_wait &&
      api->event_set_create(&m->events_) == nvml::kSuccess) {
    for (auto device : m->devices_) api->register_events(device, nvml::kEventTypeXidCriticalError, m->events_);
  }
  return m;
}

GpuReading NvmlMonitor::read(int gpu) const {
  const nvml::Device d = devices_[static_cast<std::size_t>(gpu)];
  const nvml::Api& a = *api_;
  GpuReading g;
  auto lost = [&](nvml::Return r) {
    if (r == nvml::kErrorGpuIsLost) g.lost = true;
    return r == nvml::kSuccess;
  };
  if (a.total_ecc_errors) {
    if (!lost(a.total_ecc_errors(d, nvml::kMemoryErrorCorrected, nvml::kVolatileEcc, &g.ecc_corrected))) g.ecc_corrected = 0;
    if (!lost(a.total_ecc_errors(d, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &g.ecc_uncorrected))) g.ecc_uncorrected = 0;
  }
  unsigned corrected_rows = 0, uncorrected_rows = 0;
  if (a.remapped_rows && !lost(a.remapped_rows(d, &corrected_rows, &uncorrected_rows, &g.remap_pending, &g.remap_failure)))
    g.remap_pending = g.remap_failure = 0;
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    int active = 0;
    g.link_active[link] = a.nvlink_state && lost(a.nvlink_state(d, link, &active)) ? (active ? 1 : 0) : -1;
    if (g.link_active[link] < 0 || !a.nvlink_error_counter) continue;
    for (int c = 0; c < nvml::kNvLinkErrorCounters; ++c) {
      unsigned long long n = 0;
      if (lost(a.nvlink_error_counter(d, link, c, &n))) g.link_errors[link] += n;
    }
  }
  if (a.clock && !lost(a.clock(d, nvml::kClockSm, &g.sm_clock_mhz))) g.sm_clock_mhz = 0;
  if (a.max_clock && !lost(a.max_clock(d, nvml::kClockSm, &g.sm_max_mhz))) g.sm_max_mhz = 0;
  if (a.throttle_reasons && !lost(a.throttle_reasons(d, &g.throttle_reasons))) g.throttle_reasons = 0;
  if (a.temperature && !lost(a.temperature(d, nvml::kTemperatureGpu, &g.temperature_c))) g.temperature_c = 0;
  return g;
}

void NvmlMonitor::compare(int gpu, const GpuReading& was, const GpuReading& now, std::vector<HealthEvent>& out) const {
  if (now.lost && !was.lost) out.push_back(event(Symptom::GpuLost, gpu, "gpu_lost"));
  if (now.lost) return;  // the other readings of a lost GPU mean nothing
  if (now.ecc_uncorrected > was.ecc_uncorrected)
    out.push_back(event(Symptom::EccUncorrected, gpu, plus("ecc_uncorrected", now.ecc_uncorrected - was.ecc_uncorrected)));
  if (now.ecc_corrected > was.ecc_corrected)
    out.push_back(event(Symptom::EccCorrected, gpu, plus("ecc_corrected", now.ecc_corrected - was.ecc_corrected)));
  if (now.remap_failure && !was.remap_failure) out.push_back(event(Symptom::RowRemapFailed, gpu, "row_remap_failure"));
  if (now.remap_pending && !was.remap_pending) out.push_back(event(Symptom::RowRemapPending, gpu, "row_remap_pending"));
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    if (was.link_active[link] == 1 && now.link_active[link] == 0)
      out.push_back(event(Symptom::NvlinkDown, gpu, "nvlink=" + std::to_string(link) + " down"));
    if (now.link_errors[link] > was.link_errors[link])
      out.push_back(event(Symptom::NvlinkErrors, gpu,
                          "nvlink=" + std::to_string(link) + " " + plus("errors", now.link_errors[link] - was.link_errors[link])));
  }
  const bool slow_now = now.throttle_reasons & kSlowingReasons, slow_was = was.throttle_reasons & kSlowingReasons;
  if (slow_now && !slow_was) {
    char reasons[64];
    const double share = now.sm_max_mhz ? static_cast<double>(now.sm_clock_mhz) / now.sm_max_mhz : 1.0;
    std::snprintf(reasons, sizeof reasons, "reasons=0x%llx", now.throttle_reasons);
    out.push_back(event(Symptom::Throttled, gpu, reasons, -1, share));
  } else if (!slow_now && slow_was) {
    out.push_back(event(Symptom::ThrottleCleared, gpu, ""));
  }
  if (now.temperature_c >= options_.temperature_limit_c && was.temperature_c < options_.temperature_limit_c)
    out.push_back(event(Symptom::HotGpu, gpu, "temperature=" + std::to_string(now.temperature_c)));
}

void NvmlMonitor::wait_for_xids(unsigned wait_ms, std::vector<HealthEvent>& out) {
  if (!events_) return;
  for (;;) {
    nvml::EventData data{};
    const nvml::Return r = api_->event_set_wait(events_, &data, wait_ms);
    if (r != nvml::kSuccess) return;  // timeout: nothing happened
    if (!(data.event_type & nvml::kEventTypeXidCriticalError)) continue;
    int gpu = -1;
    for (std::size_t i = 0; i < devices_.size(); ++i)
      if (devices_[i] == data.device) gpu = static_cast<int>(i);
    out.push_back(event(Symptom::Xid, gpu, "xid", static_cast<int>(data.event_data)));
    wait_ms = 0;  // drain what else is queued, without waiting again
  }
}

std::vector<HealthEvent> NvmlMonitor::poll(unsigned wait_ms) {
  std::vector<HealthEvent> out;
  std::vector<GpuReading> now;
  for (int g = 0; g < gpu_count(); ++g) now.push_back(read(g));
  if (!have_baseline_) {
    // Counters already high when the supervisor starts: worth saying once, not a new fault.
    for (int g = 0; g < gpu_count(); ++g) {
      const auto& r = now[static_cast<std::size_t>(g)];
      if (r.lost) out.push_back(event(Symptom::GpuLost, g, "gpu_lost"));
      if (r.ecc_uncorrected || r.remap_pending || r.remap_failure)
        out.push_back(event(Symptom::Baseline, g,
                            "baseline ecc_uncorrected=" + std::to_string(r.ecc_uncorrected) + " remap_pending=" +
                                std::to_string(r.remap_pending) + " remap_failure=" + std::to_string(r.remap_failure)));
    }
    have_baseline_ = true;
  } else {
    for (int g = 0; g < gpu_count(); ++g) compare(g, last_[static_cast<std::size_t>(g)], now[static_cast<std::size_t>(g)], out);
  }
  last_ = std::move(now);
  wait_for_xids(wait_ms, out);
  return out;
}

}  // namespace ctwin::live
