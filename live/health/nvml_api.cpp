#include "live/health/nvml_api.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace ctwin::live::nvml {

std::string Api::error(Return r) const {
  const char* text = error_string ? error_string(r) : nullptr;
  return (text ? std::string(text) : std::string("NVML error")) + " (" + std::to_string(r) + ")";
}

namespace {

template <class F>
void bind(void* handle, F& slot, std::initializer_list<const char*> names) {
  slot = nullptr;
  for (const char* name : names)
    if (void* symbol = ::dlsym(handle, name)) {
      slot = reinterpret_cast<F>(symbol);
      return;
    }
}

}  // namespace

std::shared_ptr<const Api> load(std::string& why) {
  const char* env = std::getenv("CTWIN_NVML_LIBRARY");
  const std::string path = env && *env ? env : "libnvidia-ml.so.1";
  // Never closed: NVML keeps threads of its own, and the monitor lives as long as the process.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    why = path + ": " + ::dlerror();
    return nullptr;
  }
  auto api = std::make_shared<Api>();
  bind(handle, api->init, {"nvmlInit_v2", "nvmlInit"});
  bind(handle, api->shutdown, {"nvmlShutdown"});
  bind(handle, api->error_string, {"nvmlErrorString"});
  bind(handle, api->device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  bind(handle, api->device_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  bind(handle, api->pci_info, {"nvmlDeviceGetPciInfo_v3"});
  bind(handle, api->uuid, {"nvmlDeviceGetUUID"});
  bind(handle, api->name, {"nvmlDeviceGetName"});
  bind(handle, api->total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"});
  bind(handle, api->remapped_rows, {"nvmlDeviceGetRemappedRows"});
  bind(handle, api->nvlink_state, {"nvmlDeviceGetNvLinkState"});
  bind(handle, api->nvlink_error_counter, {"nvmlDeviceGetNvLinkErrorCounter"});
  bind(handle, api->clock, {"nvmlDeviceGetClockInfo"});
  bind(handle, api->max_clock, {"nvmlDeviceGetMaxClockInfo"});
  bind(handle, api->throttle_reasons, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(handle, api->temperature, {"nvmlDeviceGetTemperature"});
  bind(handle, api->event_set_create, {"nvmlEventSetCreate"});
  bind(handle, api->register_events, {"nvmlDeviceRegisterEvents"});
  bind(handle, api->event_set_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
  bind(handle, api->event_set_free, {"nvmlEventSetFree"});
  if (!api->init || !api->device_count || !api->device_by_index) {
    why = path + ": not NVML (nvmlInit, nvmlDeviceGetCount or nvmlDeviceGetHandleByIndex missing)";
    return nullptr;
  }
  if (const Return r = api->init(); r != kSuccess) {
    why = path + ": nvmlInit: " + api->error(r);
    return nullptr;
  }
  return api;
}

}  // namespace ctwin::live::nvml
