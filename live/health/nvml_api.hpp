#pragma once
//! NVML, loaded with dlopen("libnvidia-ml.so.1") and declared here: nvml.h is often not installed,
//! and the library comes with the driver, not the toolkit (docs/architecture.md). Only the calls the
//! health monitor makes, with the types and constants of NVIDIA's public header. Functions added
//! after old drivers are optional: a missing one reads as "not supported".
//! $CTWIN_NVML_LIBRARY names another library (the tests' fake).

#include <memory>
#include <string>

namespace ctwin::live::nvml {

using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorGpuIsLost = 15;

using Device = struct DeviceOpaque*;
using EventSet = struct EventSetOpaque*;

//! nvmlEventData_t
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  //!< the Xid, for an Xid event (999: unknown)
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

//! nvmlPciInfo_t (v3)
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8;
inline constexpr int kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kTemperatureGpu = 0;
inline constexpr unsigned kNvLinkMaxLinks = 18;
//! nvmlNvLinkErrorCounter_t: replay, recovery, CRC flit, CRC data.
inline constexpr int kNvLinkErrorCounters = 4;
//! NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kUuidBufferSize = 96, kNameBufferSize = 96;
//! Throttle reasons that slow a healthy job down (not idle, not application clocks).
inline constexpr unsigned long long kThrottleSwPowerCap = 0x4, kThrottleHwSlowdown = 0x8,
                                    kThrottleSwThermal = 0x20, kThrottleHwThermal = 0x40,
                                    kThrottleHwPowerBrake = 0x80;

//! The loaded functions; null where the library lacks one.
struct Api {
  Return (*init)();
  Return (*shutdown)();
  const char* (*error_string)(Return);
  Return (*device_count)(unsigned*);
  Return (*device_by_index)(unsigned, Device*);
  Return (*pci_info)(Device, PciInfo*);
  Return (*uuid)(Device, char*, unsigned length);  //!< "GPU-8c3b…", the id DCGM and RMA tickets use
  Return (*name)(Device, char*, unsigned length);  //!< "NVIDIA H100 80GB HBM3"
  Return (*total_ecc_errors)(Device, int error_type, int counter_type, unsigned long long*);
  Return (*remapped_rows)(Device, unsigned* corrected, unsigned* uncorrected, unsigned* pending, unsigned* failure);
  Return (*nvlink_state)(Device, unsigned link, int* active);
  Return (*nvlink_error_counter)(Device, unsigned link, int counter, unsigned long long*);
  Return (*clock)(Device, int type, unsigned*);
  Return (*max_clock)(Device, int type, unsigned*);
  Return (*throttle_reasons)(Device, unsigned long long*);
  Return (*temperature)(Device, int sensor, unsigned*);
  Return (*event_set_create)(EventSet*);
  Return (*register_events)(Device, unsigned long long types, EventSet);
  Return (*event_set_wait)(EventSet, EventData*, unsigned timeout_ms);
  Return (*event_set_free)(EventSet);

  std::string error(Return r) const;
};

//! The library, initialised; nullptr with `why` when it cannot be loaded or initialised (no driver).
std::shared_ptr<const Api> load(std::string& why);

}  // namespace ctwin::live::nvml
