#pragma once
//! `ctwin live ckpt-bench`: the flash checkpoint engine's throughput as ratios to the ceilings of
//! the same machine, measured in the same run with the same access pattern: snapshot (device ->
//! shared memory) against the device-to-host copy rate, restore from memory against host-to-device,
//! persist against a write + fsync of the same size, from a shared-memory mapping in the same
//! 16 MiB writes, to the same folder. On the CPU backend the "link" is memcpy between the buffer
//! and a mapped, prefaulted file of the shared-memory folder, as the engine's slot is. Each round
//! measures a ceiling sample and an engine sample back to back, so a noisy neighbour slows both.
//! Portable core: the CUDA plugin when a GPU is used, else the standard library.

#include <cstdint>
#include <functional>
#include <string>

namespace ctwin::flash {

struct CkptBenchOptions {
  std::uint64_t bytes = std::uint64_t(1) << 30;
  int device = -1;  //!< CUDA device, or -1 for host memory (CPU backend)
  std::string shm_dir = "/dev/shm";
  std::string persist_dir;  //!< required
  int iterations = 3;       //!< each figure is the best of these
  std::function<void(const std::string&)> progress;  //!< a line per step of a long run (optional)
};

struct CkptBenchResult {
  std::string backend, device_name;
  std::uint64_t bytes = 0;
  double d2h_ceiling = 0, h2d_ceiling = 0, disk_ceiling = 0;  //!< bytes per second
  double snapshot = 0, restore = 0, persist = 0;              //!< bytes per second
};

//! Throws FlashError (shared memory, disk) or CannotRunHere (no GPU).
CkptBenchResult run_ckpt_bench(const CkptBenchOptions& options);
std::string ckpt_bench_text(const CkptBenchResult& r);
std::string ckpt_bench_json(const CkptBenchResult& r);

}  // namespace ctwin::flash
