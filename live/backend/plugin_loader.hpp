#pragma once
//! Finds and loads the CUDA backend plugin (libctwin_cuda.so) at run time, so that nothing of ctwin
//! links CUDA. Looked for in $CTWIN_CUDA_PLUGIN, then beside the binary or library that asks, then
//! by the loader's search path. Standard library and libdl only (the GPU-side build uses it too).

#include <string>

#include "core/errors.hpp"
#include "live/backend/ctwin_backend.h"

namespace ctwin::live {

//! The plugin's table; loaded once per process. Throws CannotRunHere (core/errors.hpp: exit 3,
//! with the reason: no plugin, no device, driver too old) when the plugin or its libraries cannot
//! be loaded.
const ctwin_backend_v1& cuda_plugin();

//! The plugin, checked to have a usable GPU: throws CannotRunHere saying why not (no device;
//! driver too old, with driver and runtime versions). Returns the number of devices.
int require_cuda_devices(const ctwin_backend_v1& plugin);

//! The same check in a short-lived child process, so that this process has not initialised CUDA
//! when it forks its ranks (a CUDA context does not survive fork).
int probe_cuda_devices_in_child();

//! "12.4" from CUDA's 12040.
std::string cuda_version_string(int encoded);

//! Throws std::runtime_error with the plugin's message when `status` is not CTWIN_OK.
void check_status(const ctwin_backend_v1& plugin, int status, const char* what);

}  // namespace ctwin::live
