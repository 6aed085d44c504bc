// Issue 5's benchmark: one step of a 16,384-GPU and of a 100,352-GPU layout (GPT-3 175B, TP 8 x
// PP 8), cold (every SimGrid phase simulated, platforms built) and cached (the lookup a trial makes
// by state signature); and peak memory of the simulation processes. Also an expert-parallel MoE
// layout of 16,384 GPUs, a shrinking job's speed at every data-parallel width, and `ctwin step
// --sensitivity` on both 16k layouts (every field that applies, cold).
//   ctwin_bench_step
#include <sys/resource.h>

#include <chrono>
#include <cstdio>

#include "sim/step_cache.hpp"
#include "sim/step_sensitivity.hpp"

using namespace ctwin;
using Clock = std::chrono::steady_clock;

namespace {

WorkloadSpec gpt175b(int gpus, int global_batch) {
  WorkloadSpec s;
  Workload& w = s.workload;
  w.model = {.layers = 96, .hidden = 12288, .heads = 96, .vocab = 64000, .seq_len = 2048};
  w.layout.tp = 8;
  w.layout.pp = 8;
  w.layout.dp = gpus / 64;
  w.layout.global_batch = global_batch;
  w.efficiency.gemm = 0.703;
  w.efficiency.bandwidth = 0.513;
  w.gpu_peak_flops = 312e12;
  s.fabric.nodes_per_leaf = 32;
  return s;
}

void measure(const char* name, const WorkloadSpec& spec) {
  StepCache cache("");
  const auto start = Clock::now();
  const StepBreakdown b = cache.get(spec, {});
  const double cold_s = std::chrono::duration<double>(Clock::now() - start).count();
  const std::uint64_t key = StepCache::signature(spec, {});
  const int lookups = 10'000'000;
  double sum = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < lookups; ++i) sum += cache.find(key + static_cast<std::uint64_t>(i & 1) * 0)->step_s;
  const double cached_ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / lookups;
  const auto t1 = Clock::now();
  for (int i = 0; i < 1000; ++i) sum += static_cast<double>(StepCache::signature(spec, {}) & 1);
  const double signature_us = std::chrono::duration<double, std::micro>(Clock::now() - t1).count() / 1000;
  rusage children{};
  getrusage(RUSAGE_CHILDREN, &children);
  std::printf("| %s | %d | %.2f s | %.0f ns | %.2f µs | %.0f MiB | step %.2f s, MFU %.1f%% (checksum %.0f) |\n", name, b.gpus,
              cold_s, cached_ns, signature_us, static_cast<double>(children.ru_maxrss) / 1024, b.step_s, 100 * b.mfu,
              sum > 0 ? 1.0 : 0.0);
}

//! Mixtral-8x22B-shaped MoE with expert parallelism 8 (scenarios/moe_8x22b_ep.json), TP 2 x PP 4.
WorkloadSpec moe(int gpus) {
  WorkloadSpec s;
  Workload& w = s.workload;
  w.model = {.layers = 56, .hidden = 6144, .heads = 48, .ffn_hidden = 16384, .gated_mlp = true, .vocab = 32768, .seq_len = 4096, .experts = 8, .top_k = 2};
  w.layout.tp = 2;
  w.layout.pp = 4;
  w.layout.ep = 8;
  w.layout.dp = gpus / 8;
  w.layout.global_batch = gpus / 8 * 4;
  w.layout.recompute = Recompute::Selective;
  w.efficiency.gemm = 0.55;
  w.efficiency.bandwidth = 0.8;
  w.gpu_peak_flops = 989e12;
  s.fabric.nvlink_bytes_per_s = 450e9;
  s.fabric.nic_bytes_per_s = 50e9;
  s.fabric.nodes_per_leaf = 32;
  return s;
}

//! A shrinking job's speed at every data-parallel width, as resolve_step_time computes it.
void measure_widths(const char* name, const WorkloadSpec& spec) {
  StepCache cache("");
  std::vector<int> widths;
  for (int w = 1; w <= spec.workload.layout.dp; ++w) widths.push_back(w);
  const auto start = Clock::now();
  const std::vector<double> speeds = cache.speeds_at_widths(spec, widths);
  const double cold_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("| %s: speed at all %zu widths | %d | %.2f s | | | | %d widths simulated; speed at half width %.3f |\n", name,
              widths.size(), workload_costs(spec.workload).gpus, cold_s, cache.simulated(), speeds[widths.size() / 2 - 1]);
}

//! `ctwin step --sensitivity`: every plausible value of every field that applies, cold.
void measure_sensitivity(const char* name, const WorkloadSpec& spec) {
  StepCache cache("");
  const auto start = Clock::now();
  const StepSensitivity s = step_sensitivity(spec, spec.fabric.gpus_per_node, 80.0 * (1 << 30), cache);
  const double cold_s = std::chrono::duration<double>(Clock::now() - start).count();
  std::size_t values = 0;
  for (const FieldSensitivity& f : s.fields) values += f.points.size();
  std::printf("| %s: --sensitivity | %d | %.2f s | | | | %zu fields, %zu values, %d simulated; %.2f .. %.2f s, %s most |\n", name,
              workload_costs(spec.workload).gpus, cold_s, s.fields.size(), values, cache.simulated(), s.min_s, s.max_s, s.most.c_str());
}

}  // namespace

int main() {
  std::printf("| layout | GPUs | cold | cached lookup | signature | peak MiB (simulation processes) | note |\n|---|---:|---:|---:|---:|---:|---|\n");
  measure("175B, TP 8 x PP 8 x DP 256", gpt175b(16384, 6144));
  measure("175B, TP 8 x PP 8 x DP 1,568", gpt175b(100352, 6272));
  measure("MoE 8x22B, TP 2 x PP 4 x DP 2,048, EP 8", moe(16384));
  measure_widths("175B, TP 8 x PP 8 x DP 256", gpt175b(16384, 6144));
  measure_sensitivity("175B, TP 8 x PP 8 x DP 256", gpt175b(16384, 6144));
  measure_sensitivity("MoE 8x22B, TP 2 x PP 4 x DP 2,048, EP 8", moe(16384));
  return 0;
}
