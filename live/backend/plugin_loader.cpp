#include "live/backend/plugin_loader.hpp"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace ctwin::live {

namespace {

//! The folder of the file this code was loaded from (the ctwin binary, or libctwin_flash.so).
std::string own_folder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

const ctwin_backend_v1* load(std::string& why) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("CTWIN_CUDA_PLUGIN"); env && *env) candidates.emplace_back(env);
  else {
    if (const std::string here = own_folder(); !here.empty()) {
      candidates.push_back(here + "/libctwin_cuda.so");               // the build folder
      candidates.push_back(here + "/../lib/ctwin/plugins/libctwin_cuda.so");  // an installed prefix
    }
    candidates.emplace_back("libctwin_cuda.so");
  }
  for (const auto& path : candidates) {
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      why += "\n  " + path + ": " + ::dlerror();
      continue;
    }
    auto entry = reinterpret_cast<ctwin_backend_entry_fn>(::dlsym(handle, CTWIN_BACKEND_ENTRY));
    const ctwin_backend_v1* table = entry ? entry() : nullptr;
    if (!table || table->abi_version != CTWIN_BACKEND_ABI_VERSION) {
      why += "\n  " + path + ": not a ctwin backend of ABI version " + std::to_string(CTWIN_BACKEND_ABI_VERSION);
      ::dlclose(handle);
      continue;
    }
    return table;  // never unloaded: CUDA does not like being unloaded
  }
  return nullptr;
}

}  // namespace

const ctwin_backend_v1& cuda_plugin() {
  static std::once_flag once;
  static const ctwin_backend_v1* table = nullptr;
  static std::string why;
  std::call_once(once, [] { table = load(why); });
  if (!table)
    throw CannotRunHere("the CUDA backend plugin cannot be loaded (ctwin built without CUDA, or CUDA's libraries are "
                        "missing here):" + why);
  return *table;
}

std::string cuda_version_string(int encoded) {
  if (encoded <= 0) return "none";
  return std::to_string(encoded / 1000) + "." + std::to_string(encoded % 1000 / 10);
}

int require_cuda_devices(const ctwin_backend_v1& plugin) {
  int driver = 0, runtime = 0;
  plugin.versions(&driver, &runtime);
  const std::string versions =
      " (driver supports CUDA " + cuda_version_string(driver) + ", plugin runtime CUDA " + cuda_version_string(runtime) + ")";
  if (driver == 0) throw CannotRunHere("no NVIDIA driver here (libcuda.so.1 not found)" + versions);
  int count = 0;
  const int status = plugin.device_count(&count);
  if (status == CTWIN_ERR_DRIVER_TOO_OLD)  // minor-version compatibility lets an older 12.x driver run 12.y
    throw CannotRunHere("the NVIDIA driver is too old for the plugin's CUDA runtime" + versions);
  if (status != CTWIN_OK || count == 0)
    throw CannotRunHere(std::string("no usable GPU: ") + plugin.last_error() + versions);
  return count;
}

int probe_cuda_devices_in_child() {
  int out[2];
  if (::pipe(out) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(out[0]);
    std::string answer;
    try {
      answer = "ok " + std::to_string(require_cuda_devices(cuda_plugin()));
    } catch (const std::exception& e) {
      answer = std::string("no ") + e.what();
    }
    (void)!::write(out[1], answer.data(), answer.size());
    ::_exit(0);
  }
  ::close(out[1]);
  std::string answer;
  char chunk[512];
  for (ssize_t n; (n = ::read(out[0], chunk, sizeof chunk)) > 0;) answer.append(chunk, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (answer.rfind("ok ", 0) == 0) return std::stoi(answer.substr(3));
  if (answer.rfind("no ", 0) == 0) throw CannotRunHere(answer.substr(3));
  throw CannotRunHere("probing the GPUs crashed (signal " + std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0) + ")");
}

void check_status(const ctwin_backend_v1& plugin, int status, const char* what) {
  if (status != CTWIN_OK) throw std::runtime_error(std::string(what) + ": " + plugin.last_error());
}

}  // namespace ctwin::live
