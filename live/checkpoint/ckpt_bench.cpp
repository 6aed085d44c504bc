#include "live/checkpoint/ckpt_bench.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/wall_clock.hpp"
#include "core/version.hpp"
#include "live/backend/plugin_loader.hpp"
#include "live/checkpoint/flash_engine.hpp"
#include "live/checkpoint/flash_error.hpp"

namespace ctwin::flash {

namespace {

using Clock = std::chrono::steady_clock;

std::string fixed(double x, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}

//! A file of `bytes` in the shared-memory folder, mapped and prefaulted: what a snapshot writes into.
class ShmMapping {
 public:
  ShmMapping(const std::string& dir, std::uint64_t bytes) : path_(dir + "/ctwin-ceiling." + std::to_string(::getpid())), bytes_(bytes) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) throw FlashError(ErrorKind::SharedMemory, system_error_text(path_, "cannot create", errno));
    const int e = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    if (e == 0) base_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (e != 0 || base_ == MAP_FAILED) {
      ::unlink(path_.c_str());
      throw FlashError(ErrorKind::SharedMemory, system_error_text(path_, "cannot reserve or map", e != 0 ? e : errno));
    }
    std::memset(base_, 0x5a, bytes);
  }
  ~ShmMapping() {
    ::munmap(base_, bytes_);
    ::unlink(path_.c_str());
  }
  ShmMapping(const ShmMapping&) = delete;
  ShmMapping& operator=(const ShmMapping&) = delete;
  unsigned char* data() const { return static_cast<unsigned char*>(base_); }

 private:
  std::string path_;
  std::uint64_t bytes_;
  void* base_ = MAP_FAILED;
};

//! Writes `bytes` from `source` (a shared-memory mapping) into `dir` in 16 MiB writes, then
//! fsync: the persist's own pattern without its checksum and manifest.
double disk_write_rate(const std::string& dir, const unsigned char* source, std::uint64_t bytes) {
  const std::string path = dir + "/ctwin-disk-ceiling." + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw FlashError(ErrorKind::Persist, system_error_text(path, "cannot create", errno));
  constexpr std::uint64_t kChunk = 16ull << 20;
  const auto t0 = Clock::now();
  bool ok = true;
  for (std::uint64_t done = 0; done < bytes && ok;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(bytes - done, kChunk));
    const ssize_t w = ::write(fd, source + done, n);
    ok = w > 0;
    done += ok ? static_cast<std::uint64_t>(w) : 0;
  }
  ok = ok && ::fsync(fd) == 0;
  const double seconds = seconds_since(t0);
  const int e = errno;
  ::close(fd);
  ::unlink(path.c_str());
  if (!ok) throw FlashError(ErrorKind::Persist, system_error_text(path, "writing the disk ceiling failed", e));
  return double(bytes) / seconds;
}

double copy_rate(void* to, const void* from, std::uint64_t bytes) {
  const auto t0 = Clock::now();
  std::memcpy(to, from, bytes);
  return double(bytes) / seconds_since(t0);
}

}  // namespace

CkptBenchResult run_ckpt_bench(const CkptBenchOptions& o) {
  if (o.persist_dir.empty()) throw FlashError(ErrorKind::Usage, "ckpt-bench needs a persist folder");
  // The ceiling's mapping sits beside the engine's two slots: three times the size in all, said
  // before anything is allocated rather than as a slot that no longer fits.
  if (free_bytes(o.shm_dir) < 3 * o.bytes)  // a --size this folder cannot hold: the command's input
    throw FlashError(ErrorKind::Usage,
                     o.shm_dir + " is too small for ckpt-bench: its ceiling's mapping and the engine's two slots need " +
                         fixed(3.0 * double(o.bytes) / (1u << 20), 0) + " MiB, " +
                         fixed(double(free_bytes(o.shm_dir)) / (1u << 20), 0) + " MiB are free (--size, --shm-dir)");
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
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  ShmMapping ceiling_map(o.shm_dir, o.bytes);
  // One round: the ceilings' samples, then (below) the engine's, back to back.
  auto ceiling_round = [&](int round) {
    if (!plugin) {
      r.d2h_ceiling = std::max(r.d2h_ceiling, copy_rate(ceiling_map.data(), buffer, o.bytes));
      r.h2d_ceiling = std::max(r.h2d_ceiling, copy_rate(buffer, ceiling_map.data(), o.bytes));
    }
    r.disk_ceiling = std::max(r.disk_ceiling, disk_write_rate(o.persist_dir, ceiling_map.data(), o.bytes));
    say("ckpt-bench: round " + std::to_string(round) + "/" + std::to_string(o.iterations) + ": ceilings " +
        fixed(r.d2h_ceiling / 1e9, 2) + " / " + fixed(r.h2d_ceiling / 1e9, 2) + " GB/s copy, " + fixed(r.disk_ceiling / 1e9, 2) +
        " GB/s disk");
  };

  EngineOptions eo;
  eo.name = "ckpt-bench-" + std::to_string(::getpid());
  eo.shm_dir = o.shm_dir;
  eo.persist_dir = o.persist_dir + "/" + eo.name;
  eo.keep_last = 1;
  {
    Engine engine(eo);
    engine.register_buffer("state", buffer, o.bytes, o.device);
    say("ckpt-bench: " + fixed(double(o.bytes) / (1u << 20), 0) + " MiB, " + std::to_string(o.iterations) +
        " rounds; preparing the slots");
    engine.save(0);  // creates, reserves and pins the slots: not part of a snapshot's cost
    engine.wait_persisted(0, 3600);
    for (int i = 1; i <= o.iterations; ++i) {
      ceiling_round(i);
      const SaveStats s = engine.save(i);
      r.snapshot = std::max(r.snapshot, double(o.bytes) / s.seconds);
      const auto t0 = Clock::now();
      if (!engine.wait_persisted(i, 3600)) throw FlashError(ErrorKind::Persist, "persist did not finish in an hour");
      r.persist = std::max(r.persist, double(o.bytes) / seconds_since(t0));
      const Restored back = engine.restore();
      if (back.step != i || back.source != RestoreSource::Memory)
        throw std::runtime_error("ckpt-bench: restore gave step " + std::to_string(back.step) + ", not " + std::to_string(i));
      r.restore = std::max(r.restore, double(o.bytes) / back.seconds);
      say("ckpt-bench: round " + std::to_string(i) + "/" + std::to_string(o.iterations) + ": snapshot " + fixed(r.snapshot / 1e9, 2) +
          ", restore " + fixed(r.restore / 1e9, 2) + ", persist " + fixed(r.persist / 1e9, 2) + " GB/s (best so far)");
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
  out += row("persist to disk", r.persist, "16 MiB writes+fsync", r.disk_ceiling);
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
