#include "live/health/health_watch.hpp"

#include <condition_variable>
#include <thread>

namespace ctwin::live {

//! Owned jointly by the watch and its thread, so that a thread stuck in NVML can be left behind.
struct HealthWatch::Shared {
  std::unique_ptr<NvmlMonitor> monitor;
  std::mutex mutex;
  std::condition_variable stop_requested;
  bool stopping = false, polling = false;
  std::chrono::steady_clock::time_point poll_started;
  std::vector<HealthEvent> events;
  std::vector<GpuReading> readings;
};

HealthWatch::HealthWatch(std::unique_ptr<NvmlMonitor> monitor, double interval_s, double stall_limit_s)
    : shared_(std::make_shared<Shared>()), bus_ids_(monitor->pci_bus_ids()), identities_(monitor->identities()), stall_limit_s_(stall_limit_s) {
  shared_->monitor = std::move(monitor);
  const auto wait_ms = static_cast<unsigned>(interval_s * 1000);
  std::thread([s = shared_, wait_ms] {
    for (;;) {
      {
        std::lock_guard lock(s->mutex);
        if (s->stopping) return;
        s->polling = true;
        s->poll_started = std::chrono::steady_clock::now();
      }
      // The wait for Xid events is the poll interval; a short one keeps stopping prompt.
      auto found = s->monitor->poll(std::min(wait_ms, 200u));
      std::unique_lock lock(s->mutex);
      s->polling = false;
      s->readings = s->monitor->last();
      s->events.insert(s->events.end(), found.begin(), found.end());
      if (wait_ms > 200 && s->stop_requested.wait_for(lock, std::chrono::milliseconds(wait_ms - 200), [&] { return s->stopping; }))
        return;
    }
  }).detach();
}

HealthWatch::~HealthWatch() {
  std::lock_guard lock(shared_->mutex);
  shared_->stopping = true;
  shared_->stop_requested.notify_all();
}

std::vector<HealthEvent> HealthWatch::take() {
  std::lock_guard lock(shared_->mutex);
  std::vector<HealthEvent> out;
  out.swap(shared_->events);
  const auto now = std::chrono::steady_clock::now();
  if (shared_->polling && !stall_reported_ &&
      std::chrono::duration<double>(now - shared_->poll_started).count() > stall_limit_s_) {
    stall_reported_ = true;
    out.push_back({now, Symptom::MonitorStuck, -1, -1, 0, "nvml_unresponsive", "nvml"});
  }
  if (!shared_->polling) stall_reported_ = false;
  return out;
}

std::vector<GpuReading> HealthWatch::readings() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->readings;
}

}  // namespace ctwin::live
