#pragma once
//! The GPU health monitor: reads every GPU through NVML at each poll, turns what changed into
//! typed symptoms, and waits for NVML's Xid events in between: an Xid event; uncorrected and
//! corrected ECC errors rising; a row remap failure or a remap pending; an NVLink link going down,
//! or its error counters rising; clocks throttled for power, thermal or hardware slowdown (with the
//! SM clock's share of its maximum) and cleared; temperature past the limit; a lost GPU. What each
//! means is the health policy's call (policies/health_policy). The first reading is the baseline:
//! counters already high are reported once.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "live/health/health_event.hpp"
#include "live/health/nvml_api.hpp"

namespace ctwin::live {

//! Who a GPU is, read once when the monitor opens: the labels that join its series with
//! dcgm-exporter's (UUID, pci_bus_id, modelName) and with an RMA ticket. Empty where NVML has none.
struct GpuIdentity {
  std::string uuid, pci_bus_id, model;
};

struct GpuReading {
  bool lost = false;
  unsigned long long ecc_corrected = 0, ecc_uncorrected = 0;
  unsigned remap_pending = 0, remap_failure = 0;
  std::array<int, nvml::kNvLinkMaxLinks> link_active{};  //!< 1 up, 0 down, -1 no such link
  std::array<unsigned long long, nvml::kNvLinkMaxLinks> link_errors{};
  unsigned sm_clock_mhz = 0, sm_max_mhz = 0;
  unsigned long long throttle_reasons = 0;
  unsigned temperature_c = 0;
};

struct NvmlMonitorOptions {
  unsigned temperature_limit_c = 85;
};

class NvmlMonitor {
 public:
  //! nullptr, with `why`, when NVML cannot be loaded (no driver) or sees no GPU.
  static std::unique_ptr<NvmlMonitor> open(const NvmlMonitorOptions& options, std::string& why);
  ~NvmlMonitor();

  int gpu_count() const { return static_cast<int>(devices_.size()); }
  //! Bus ids as NVML writes them ("00000000:3B:00.0"), by GPU index.
  const std::vector<std::string>& pci_bus_ids() const { return bus_ids_; }
  //! Every GPU's identity, by index.
  const std::vector<GpuIdentity>& identities() const { return identities_; }
  const std::vector<GpuReading>& last() const { return last_; }

  //! One poll: read every GPU, report what changed, then wait up to `wait_ms` for Xid events.
  std::vector<HealthEvent> poll(unsigned wait_ms);

 private:
  NvmlMonitor(std::shared_ptr<const nvml::Api> api, NvmlMonitorOptions options);
  GpuReading read(int gpu) const;
  void compare(int gpu, const GpuReading& before, const GpuReading& now, std::vector<HealthEvent>& out) const;
  void wait_for_xids(unsigned wait_ms, std::vector<HealthEvent>& out);

  std::shared_ptr<const nvml::Api> api_;
  NvmlMonitorOptions options_;
  std::vector<nvml::Device> devices_;
  std::vector<std::string> bus_ids_;
  std::vector<GpuIdentity> identities_;
  std::vector<GpuReading> last_;
  bool have_baseline_ = false;
  nvml::EventSet events_ = nullptr;
};

//! Bus ids compare by domain, bus and device: the kernel log writes "0000:3b:00", NVML
//! "00000000:3B:00.0". -1 when `pci` matches none.
int gpu_of_bus_id(const std::vector<std::string>& bus_ids, const std::string& pci);

}  // namespace ctwin::live
