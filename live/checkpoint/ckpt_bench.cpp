#include "live/checkpoint/ckpt_bench.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/version.hpp"
#include "live/backend/plugin_loader.hpp"
#include "live/checkpoint/flash_engine.hpp"
#include "live/checkpoint/flash_error.hpp"

namespace ctwin::flash {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

//! A plain sequential write + fsync of `bytes` into `dir`: the disk's ceiling for a persist.
double disk_write_rate(const std::string& dir, std::uint64_t bytes) {
  const std::string path = dir + "/ctwin-disk-ceiling." + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw FlashError(ErrorKind::Persist, system_error_text(path, "cannot create", errno));
  std::vector<unsigned char> chunk(16u << 20, 0x5a);
  const auto t0 = Clock::now();
  bool ok = true;
  for (std::uint64_t left = bytes; left > 0 && ok;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    ok = ::write(fd, chunk.data(), n) == static_cast<ssize_t>(n);
    left -= n;
  }
  ok = ok && ::fsync(fd) == 0;
  const double seconds = since(t0);
  const int e = errno;
  ::close(fd);
  ::unlink(path.c_str());
  if (!ok) throw FlashError(ErrorKind::Persist, system_error_text(path, "writing the disk ceiling failed", e));
  return double(bytes) / seconds;
}

double memcpy_rate(std::uint64_t bytes) {
  std::vector<unsigned char> a(bytes, 1), b(bytes, 0);
  std::memcpy(b.data(), a.data(), bytes);
  double best = 0;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = Clock::now();
    std::memcpy(b.data(), a.data(), bytes);
    best = std::max(best, double(bytes) / since(t0));
  }
  return best;
}

std::string fixed(double x, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}

}  // namespace

CkptBenchResult run_ckpt_bench(const CkptBenchOptions& o) {
  if (o.persist_dir.empty()) throw FlashError(ErrorKind::Usage, "ckpt-bench needs a persist folder");
  CkptBenchResult r;
  r.bytes = o.bytes;
  void* buffer = nullptr;
  std::vector<unsigned char> host;
  const ctwin_backend_v1* plugin = nullptr;
  if (o.device >= 0) {
    plugin = &live::cuda_plugin();
    live::require_cuda_devices(*plugin);
    ctwin_device_info info{};
    live::check_status(*plugin, plugin->device_info(o.device, &info), "device info");
    r.backend = "cuda";
    r.device_name = info.name;
    live::check_status(*plugin, plugin->pcie_bandwidth(o.device, std::min<std::uint64_t>(o.bytes, 1ull << 30), 10,
                                                       &r.h2d_ceiling, &r.d2h_ceiling),
                       "PCIe bandwidth");
    live::check_status(*plugin, plugin->device_alloc(o.device, o.bytes, &buffer), "device allocation");
    live::check_status(*plugin, plugin->device_fill(buffer, o.bytes, 0x3c), "device fill");
  } else {
    r.backend = "cpu";
    r.device_name = "host memory";
    r.h2d_ceiling = r.d2h_ceiling = memcpy_rate(o.bytes);
    host.assign(o.bytes, 0x3c);
    buffer = host.data();
  }
  struct DeviceBuffer {
    const ctwin_backend_v1* plugin;
    void* p;
    ~DeviceBuffer() {
      if (plugin && p) plugin->device_free(p);
    }
  } owned{plugin, plugin ? buffer : nullptr};
  for (int i = 0; i < o.iterations; ++i) r.disk_ceiling = std::max(r.disk_ceiling, disk_write_rate(o.persist_dir, o.bytes));

  EngineOptions eo;
  eo.name = "ckpt-bench-" + std::to_string(::getpid());
  eo.shm_dir = o.shm_dir;
  eo.persist_dir = o.persist_dir + "/" + eo.name;
  eo.keep_last = 1;
  {
    Engine engine(eo);
    engine.register_buffer("state", buffer, o.bytes, o.device);
    engine.save(0);  // creates, reserves and pins the slots: not part of a snapshot's cost
    engine.wait_persisted(0, 3600);
    for (int i = 1; i <= o.iterations; ++i) {
      const SaveStats s = engine.save(i);
      r.snapshot = std::max(r.snapshot, double(o.bytes) / s.seconds);
      const auto t0 = Clock::now();
      if (!engine.wait_persisted(i, 3600)) throw FlashError(ErrorKind::Persist, "persist did not finish in an hour");
      r.persist = std::max(r.persist, double(o.bytes) / since(t0));
      const Restored back = engine.restore();
      if (back.step != i || back.source != RestoreSource::Memory)
        throw std::runtime_error("ckpt-bench: restore gave step " + std::to_string(back.step) + ", not " + std::to_string(i));
      r.restore = std::max(r.restore, double(o.bytes) / back.seconds);
    }
  }
  for (int s = 0; s < 2; ++s) ::unlink(SlotLocation{o.shm_dir, eo.name, 0}.path(s).c_str());
  std::error_code ignored;
  std::filesystem::remove_all(eo.persist_dir, ignored);
  return r;
}

std::string ckpt_bench_text(const CkptBenchResult& r) {
  const char* link = r.backend == "cuda" ? "PCIe" : "memcpy";
  auto row = [&](const char* what, double rate, const char* against, double ceiling) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-22s %8s GB/s   %5.1f%% of %s %s GB/s\n", what, fixed(rate / 1e9, 2).c_str(),
                  100 * rate / ceiling, against, fixed(ceiling / 1e9, 2).c_str());
    return std::string(line);
  };
  std::string out = "flash checkpoint of " + fixed(double(r.bytes) / (1u << 20), 0) + " MiB on " + r.backend + " (" +
                    r.device_name + "), best of the runs:\n";
  out += row("snapshot to memory", r.snapshot, (std::string(link) + " device->host").c_str(), r.d2h_ceiling);
  out += row("restore from memory", r.restore, (std::string(link) + " host->device").c_str(), r.h2d_ceiling);
  out += row("persist to disk", r.persist, "write+fsync", r.disk_ceiling);
  return out;
}

std::string ckpt_bench_json(const CkptBenchResult& r) {
  char b[1024];
  std::snprintf(b, sizeof b,
                "{\n  \"schema_version\": 1,\n  \"ctwin_version\": \"%s\",\n  \"command\": \"live ckpt-bench\",\n  \"backend\": \"%s\",\n  \"device\": \"%s\",\n  \"bytes\": %llu,\n"
                "  \"d2h_ceiling_bytes_per_s\": %.6g,\n  \"h2d_ceiling_bytes_per_s\": %.6g,\n  \"disk_ceiling_bytes_per_s\": %.6g,\n"
                "  \"snapshot_bytes_per_s\": %.6g,\n  \"restore_bytes_per_s\": %.6g,\n  \"persist_bytes_per_s\": %.6g,\n"
                "  \"snapshot_of_d2h\": %.4f,\n  \"restore_of_h2d\": %.4f,\n  \"persist_of_disk\": %.4f\n}\n",
                kCtwinVersion, r.backend.c_str(), r.device_name.c_str(), static_cast<unsigned long long>(r.bytes), r.d2h_ceiling,
                r.h2d_ceiling, r.disk_ceiling, r.snapshot, r.restore, r.persist, r.snapshot / r.d2h_ceiling,
                r.restore / r.h2d_ceiling, r.persist / r.disk_ceiling);
  return b;
}

}  // namespace ctwin::flash
