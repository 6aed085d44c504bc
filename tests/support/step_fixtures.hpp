#pragma once
//! Workloads and fabrics the step-model tests share.

#include "models/workload.hpp"

namespace ctwin::test {

inline CommFabricSpec a100_fabric() {
  CommFabricSpec f;
  f.gpus_per_node = 8;
  f.nvlink_bytes_per_s = 300e9;
  f.nic_bytes_per_s = 25e9;  // 200 Gb/s
  f.nvlink_latency_s = 1e-6;
  f.nic_latency_s = 5e-6;
  return f;
}

//! GPT-3 175B as MegaScale trained it: 96 layers, hidden 12,288, 96 heads, sequence 2,048.
inline Workload gpt175b(int gpus, int global_batch) {
  Workload w;
  w.model.layers = 96;
  w.model.hidden = 12288;
  w.model.heads = 96;
  w.model.vocab = 64000;
  w.model.seq_len = 2048;
  w.layout.tp = 8;
  w.layout.pp = 8;
  w.layout.dp = gpus / 64;
  w.layout.micro_batch = 1;
  w.layout.global_batch = global_batch;
  w.efficiency.gemm = 0.6;
  w.gpu_peak_flops = 312e12;
  return w;
}

//! Llama 3 405B's shape (126 layers, GQA with 8 key/value heads) on TP 8 x PP 16 x DP 2.
inline Workload llama405b() {
  Workload w;
  w.model = {.layers = 126, .hidden = 16384, .heads = 128, .kv_heads = 8, .ffn_hidden = 53248, .gated_mlp = true,
             .vocab = 128256, .seq_len = 8192};
  w.layout.tp = 8;
  w.layout.pp = 16;
  w.layout.dp = 2;
  w.layout.micro_batch = 1;
  w.layout.global_batch = 32;
  w.efficiency.gemm = 0.5;
  w.gpu_peak_flops = 989e12;
  return w;
}

}  // namespace ctwin::test
