#include "models/fault_catalog.hpp"

namespace ctwin {
namespace {

// Sources: [L3] Llama 3 paper Table 5 (54 days, 16,384 H100: 2,423.9 GPU-years, 110,592 node-days);
// [NV] NVIDIA Xid catalog (scenarios/sources/nvidia_xid_actions.csv); [BR] ByteRobust
// Table 3 detection times; [DL] DLRover timings; [BL] BLOOM-176B logbook. [A]: an assumption.
constexpr const char* kCatalog = R"json([
  {"name": "xid79_fallen_off_bus", "rate": "0.06106/gpu-year", "effect": "crash", "xid": 79,
   "detection": "10s", "recovery": {"action": "reboot", "duration": "5min"},
   "escalation": {"after": 2, "within": "30d", "action": "replace", "duration": "2min"},
   "source": "[NV] Xid 79: RESTART_BM, often a failing GPU; rate [L3] Faulty GPU 148 / 2,423.9 GPU-years; detection [BR] GPU lost 10 s; reboot time [A]"},
  {"name": "xid48_hbm_dbe", "rate": "0.02970/gpu-year", "effect": "crash", "xid": 48,
   "detection": "10s", "recovery": {"action": "reset_gpu", "duration": "1min"},
   "escalation": {"after": 2, "within": "30d", "action": "replace", "duration": "2min"},
   "source": "[NV] Xid 48 double-bit ECC: GPU reset or node reboot clears it, the pending row remap is applied at reset; rate [L3] GPU HBM3 Memory 72; reset time [A]"},
  {"name": "xid64_remap_failure", "effect": "crash", "xid": 64,
   "detection": "10s", "recovery": {"action": "replace", "duration": "2min"},
   "source": "[NV] Xid 64 row-remap failure: reset the GPU, then service it (replace); no public rate"},
  {"name": "xid94_contained_ecc", "effect": "crash", "xid": 94,
   "detection": "10s", "recovery": {"action": "restart", "duration": "0s"},
   "source": "[NV] Xid 94 contained memory error: restart the application; no public rate"},
  {"name": "xid95_uncontained_ecc", "effect": "crash", "xid": 95,
   "detection": "10s", "recovery": {"action": "reset_gpu", "duration": "1min"},
   "source": "[NV] Xid 95 uncontained memory error: reset the GPU before restarting; no public rate"},
  {"name": "xid92_sbe_storm", "effect": "none", "xid": 92,
   "detection": "0s", "recovery": {"action": "none", "duration": "0s"},
   "source": "[NV] Xid 92 excessive single-bit ECC: IGNORE (counted, no crash); no public rate"},
  {"name": "sram_ecc", "rate": "0.007839/gpu-year", "effect": "crash", "xid": 48,
   "detection": "10s", "recovery": {"action": "reset_gpu", "duration": "1min"},
   "source": "[L3] GPU SRAM Memory 19; [NV] SRAM DBE thresholds lead to RMA"},
  {"name": "xid119_gsp", "rate": "0.007013/gpu-year", "effect": "crash", "xid": 119,
   "detection": "10s", "recovery": {"action": "reset_gpu", "duration": "1min"},
   "source": "[L3] GPU System Processor 17; [NV] Xid 119/120: reset the GPU"},
  {"name": "xid74_nvlink", "effect": "crash", "xid": 74,
   "detection": "10s", "recovery": {"action": "reboot", "duration": "5min"},
   "source": "[NV] Xid 74 NVLink error: GPU reset or node reboot; may be sympathetic; no public rate on its own ([L3] counts it under Faulty GPU)"},
  {"name": "nvlink_degraded", "effect": "slow", "slows": "nvlink", "speed_factor": 0.5,
   "detection": "10min", "recovery": {"action": "none", "duration": "4h"},
   "source": "an NVLink retrained with lanes down runs at a fraction of its bandwidth (speed_factor: the port's bandwidth left, half here [A]); the step model turns it into the job's speed through the tensor-parallel collectives, so it needs a workload; NVML reports the lanes and the errors; detection and fix times [A]; no public rate"},
  {"name": "gpu_thermal", "rate": "0.002475/gpu-year", "effect": "crash",
   "detection": "10s", "recovery": {"action": "replace", "duration": "2min"},
   "source": "[L3] GPU Thermal Interface + Sensor 6; [BR] high temperature detected in 10 s"},
  {"name": "gpu_slow", "rate": "0.00872/gpu-year", "effect": "slow", "speed_factor": 0.94,
   "detection": "6h", "recovery": {"action": "none", "duration": "2h"},
   "source": "[BL] one fail-slow GPU, 149 -> 140 TFLOP/s, in 114.7 GPU-years; detection and fix times [A]"},
  {"name": "sdc", "rate": "0.002475/gpu-year", "effect": "sdc",
   "detection": "6h", "diagnosis": "1h", "recovery": {"action": "replace", "duration": "2min"},
   "source": "[L3] Silent Data Corruption 6; found by a loss spike or NaN [A: 6 h later], culprit found by bisection [A: 1 h]"},
  {"name": "software_bug", "rate": "5.064e-4/node-day", "effect": "crash",
   "detection": "10s", "diagnosis": "1min", "recovery": {"action": "restart", "duration": "0s"},
   "source": "[L3] Software Bug 54 + Dependency 2; [DL] health check ~1 min for a software fault"},
  {"name": "nccl_hang", "rate": "6.330e-5/node-day", "effect": "hang",
   "detection": "10min", "diagnosis": "5min", "recovery": {"action": "restart", "duration": "0s"},
   "source": "[L3] NCCL Watchdog Timeouts 7; [BR] PyTorch's default NCCL timeout ~10 min (a heartbeat notices sooner: lower detection); [DL] fault localization ~5 min"},
  {"name": "nic_flap", "effect": "flap",
   "detection": "10min", "recovery": {"action": "none", "duration": "20s"},
   "source": "[BR] port flapping; ridden out when back before the NCCL watchdog (10 min); flap length [A]; no public rate"},
  {"name": "nic_failure", "rate": "6.330e-5/node-day", "effect": "crash",
   "detection": "30s", "recovery": {"action": "replace", "duration": "2min"},
   "source": "[L3] NIC 7; [BR] NIC crash detected in 30 s"},
  {"name": "host_maintenance", "rate": "2.894e-4/node-day", "effect": "crash",
   "detection": "10s", "recovery": {"action": "replace", "duration": "2min"},
   "source": "[L3] Host Maintenance (unplanned) 32"},
  {"name": "host_ssd", "rate": "2.713e-5/node-day", "effect": "crash", "detection": "30s",
   "recovery": {"action": "replace", "duration": "2min"}, "source": "[L3] SSD 3"},
  {"name": "host_psu", "rate": "2.713e-5/node-day", "effect": "crash", "detection": "10s",
   "recovery": {"action": "replace", "duration": "2min"}, "source": "[L3] Power Supply 3"},
  {"name": "host_cpu", "rate": "1.808e-5/node-day", "effect": "crash", "detection": "10s",
   "recovery": {"action": "replace", "duration": "2min"}, "source": "[L3] CPU 2"},
  {"name": "host_memory", "rate": "1.808e-5/node-day", "effect": "crash", "detection": "10s",
   "recovery": {"action": "replace", "duration": "2min"}, "source": "[L3] System Memory 2"},
  {"name": "host_board", "rate": "3.617e-5/node-day", "effect": "crash", "detection": "30s",
   "recovery": {"action": "replace", "duration": "2min"}, "source": "[L3] Server Chassis 2 + IO Expansion Board 2"},
  {"name": "kernel_panic", "effect": "crash", "detection": "2s", "recovery": {"action": "reboot", "duration": "5min"},
   "source": "[BR] OS kernel fault detected in 2 s; no public rate ([L3] has none separately)"},
  {"name": "tor_switch", "effect": "crash", "detection": "60s", "recovery": {"action": "replace", "duration": "4h"},
   "source": "[BR] switch down detected in 2 x 30 s; the blast radius comes from the topology; no public per-switch rate ([L3] Network Switch/Cable 35 counts switches and cables together); replacement time [A]"},
  {"name": "rail_switch_slow", "effect": "slow", "speed_factor": 0.875, "detection": "60s", "recovery": {"action": "replace", "duration": "4h"},
   "source": "NCCL runs on 7 of 8 rails; [BR] detection; no public per-switch rate; replacement time [A]"},
  {"name": "nvlink_switch_tray", "effect": "slow", "speed_factor": 0.889, "detection": "60s", "recovery": {"action": "replace", "duration": "4h"},
   "source": "a GB200 NVL72 rack's GPUs each reach all 9 NVLink switch trays: one tray out leaves 8/9 of the NVLink bandwidth to every GPU of the domain (NVIDIA GB200 NVL72 architecture); with \"effect\": \"crash\" its blast radius is the whole domain; detection and swap times [A]; no public rate"},
  {"name": "spine_switch", "effect": "slow", "speed_factor": 0.95, "detection": "60s", "recovery": {"action": "replace", "duration": "4h"},
   "source": "a spine lost cuts bisection bandwidth; the job's slowdown depends on its communication share [A]; no public rate"},
  {"name": "cable", "effect": "crash", "detection": "30s", "recovery": {"action": "replace", "duration": "1h"},
   "source": "[BR] NIC/port detection; one NIC cut off; no public per-cable rate; replacement time [A]"}
])json";

}  // namespace

const nlohmann::ordered_json& fault_catalog() {
  static const nlohmann::ordered_json catalog = nlohmann::ordered_json::parse(kCatalog);
  return catalog;
}

const nlohmann::ordered_json* catalog_entry(const std::string& name) {
  for (const auto& entry : fault_catalog())
    if (entry["name"] == name) return &entry;
  return nullptr;
}

const CatalogClass* catalog_class(const std::string& name) {
  static const std::vector<CatalogClass> classes = [] {
    std::vector<CatalogClass> out;
    for (const auto& entry : fault_catalog()) {
      const std::string action = entry.contains("recovery") ? entry["recovery"].value("action", "restart") : "restart";
      out.push_back({entry["name"].get<std::string>(), effect_named(entry.value("effect", "crash")).value_or(Effect::Crash),
                     act_named(action, kFaultActions).value_or(Act::Restart)});
    }
    return out;
  }();
  for (const auto& c : classes)
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string> catalog_names() {
  std::vector<std::string> names;
  for (const auto& entry : fault_catalog()) names.push_back(entry["name"].get<std::string>());
  return names;
}

}  // namespace ctwin
