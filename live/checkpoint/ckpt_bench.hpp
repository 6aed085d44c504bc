#pragma once
//! `ctwin live ckpt-bench`: the flash checkpoint engine's throughput as ratios to the ceilings of
//! the same machine, measured in the same run: snapshot (device -> shared memory) against the
//! device-to-host copy rate, restore from memory against host-to-device, persist against a plain
//! write + fsync of the same size to the same folder. On the CPU backend the "link" is memcpy.
//! Portable core: the CUDA plugin when a GPU is used, else the standard library.

#include <cstdint>
#include <string>

namespace ctwin::flash {

struct CkptBenchOptions {
  std::uint64_t bytes = std::uint64_t(1) << 30;
  int device = -1;  //!< CUDA device, or -1 for host memory (CPU backend)
  std::string shm_dir = "/dev/shm";
  std::string persist_dir;  //!< required
  int iterations = 3;       //!< each figure is the best of these
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
