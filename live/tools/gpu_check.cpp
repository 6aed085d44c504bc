// ctwin-gpu-check: the GPU-side checks of live mode, built with nothing but CMake, the CUDA toolkit
// and NCCL (`cmake -S live`, see bench/gpu.sh), for a bare GPU machine. For every visible GPU:
// bf16 GEMM throughput (and the best over a sweep of sizes, the "best cuBLAS figure"), the GEMM
// result check, HBM copy and PCIe bandwidth, a one-rank NCCL all-reduce; then the flash checkpoint
// benchmark on GPU 0. Prints JSON; exits 3 without a usable GPU.
//   ctwin-gpu-check PERSIST_DIR [CHECKPOINT_BYTES]

#include <cstdio>
#include <cstdlib>
#include <string>

#include "live/backend/plugin_loader.hpp"
#include "live/checkpoint/ckpt_bench.hpp"
#include "live/health/nvml_monitor.hpp"

namespace {

void require(const ctwin_backend_v1& p, int status, const char* what) { ctwin::live::check_status(p, status, what); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ctwin-gpu-check PERSIST_DIR [CHECKPOINT_BYTES]\n");
    return 2;
  }
  const std::uint64_t ckpt_bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (std::uint64_t(4) << 30);
  try {
    const auto& p = ctwin::live::cuda_plugin();
    const int gpus = ctwin::live::require_cuda_devices(p);
    int driver = 0, runtime = 0;
    p.versions(&driver, &runtime);
    std::printf("{\n  \"driver\": \"%s\", \"runtime\": \"%s\",\n  \"gpus\": [\n", ctwin::live::cuda_version_string(driver).c_str(),
                ctwin::live::cuda_version_string(runtime).c_str());
    for (int d = 0; d < gpus; ++d) {
      ctwin_device_info info{};
      require(p, p.device_info(d, &info), "device info");
      double burn_in = 0, best = 0;
      require(p, p.gemm_flops(d, 8192, 20, &burn_in), "GEMM 8192");  // the precheck's burn-in
      int best_n = 0;
      for (const int n : {4096, 6144, 8192, 12288, 16384}) {  // the best cuBLAS does on this GPU
        double f = 0;
        require(p, p.gemm_flops(d, n, n >= 12288 ? 10 : 30, &f), "GEMM sweep");
        if (f > best) best = f, best_n = n;
      }
      std::uint64_t mismatches = 0, non_finite = 0;
      require(p, p.gemm_check(d, 2048, &mismatches, &non_finite), "GEMM check");
      double hbm = 0, h2d = 0, d2h = 0, allreduce = 0;
      require(p, p.hbm_copy_bandwidth(d, std::size_t(1) << 30, 20, &hbm), "HBM copy");
      require(p, p.pcie_bandwidth(d, std::size_t(1) << 30, 10, &h2d, &d2h), "PCIe");
      unsigned char id[CTWIN_COMM_ID_BYTES];
      require(p, p.comm_make_id(id), "NCCL id");
      require(p, p.allreduce_seconds(id, 1, 0, d, std::size_t(64) << 20, 20, 60, &allreduce), "NCCL all-reduce");
      std::printf("    {\"index\": %d, \"name\": \"%s\", \"sm\": \"%d.%d\", \"bus_id\": \"%s\", \"memory_in_use\": %.4f,\n"
                  "     \"gemm_8192_tflops\": %.1f, \"gemm_best_tflops\": %.1f, \"gemm_best_n\": %d, \"burn_in_of_best\": %.4f,\n"
                  "     \"gemm_mismatches\": %llu, \"gemm_non_finite\": %llu,\n"
                  "     \"hbm_copy_gb_s\": %.1f, \"h2d_gb_s\": %.2f, \"d2h_gb_s\": %.2f, \"allreduce_64mib_1rank_ms\": %.3f}%s\n",
                  d, info.name, info.sm_major, info.sm_minor, info.pci_bus_id, double(info.memory_used_bytes) / double(info.memory_total_bytes), burn_in / 1e12,
                  best / 1e12, best_n, burn_in / best, static_cast<unsigned long long>(mismatches),
                  static_cast<unsigned long long>(non_finite), hbm / 1e9, h2d / 1e9, d2h / 1e9, allreduce * 1e3,
                  d + 1 < gpus ? "," : "");
    }
    // Each GPU's identity as the health monitor reads it from NVML: the labels of its metrics.
    std::string why;
    std::printf("  ],\n  \"nvml\": [");
    if (const auto monitor = ctwin::live::NvmlMonitor::open({}, why))
      for (std::size_t g = 0; g < monitor->identities().size(); ++g) {
        const auto& id = monitor->identities()[g];
        std::printf("%s{\"uuid\": \"%s\", \"pci_bus_id\": \"%s\", \"model\": \"%s\"}", g ? ", " : "", id.uuid.c_str(),
                    id.pci_bus_id.c_str(), id.model.c_str());
      }
    else
      std::fprintf(stderr, "ctwin-gpu-check: NVML: %s\n", why.c_str());
    ctwin::flash::CkptBenchOptions o;
    o.bytes = ckpt_bytes;
    o.device = 0;
    o.persist_dir = argv[1];
    const auto r = ctwin::flash::run_ckpt_bench(o);
    std::printf("],\n  \"ckpt_bench\": %s}\n", ctwin::flash::ckpt_bench_json(r).c_str());
    std::fprintf(stderr, "%s", ctwin::flash::ckpt_bench_text(r).c_str());
  } catch (const ctwin::CannotRunHere& e) {
    std::fprintf(stderr, "ctwin-gpu-check: cannot run here: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ctwin-gpu-check: %s\n", e.what());
    return 1;
  }
  return 0;
}
