#pragma once
//! What one GPU holds during a training step: weights, gradients and optimizer states (sharded as
//! the ZeRO stage says), and the activations its pipeline stage keeps for the backward pass.
//!
//! States follow Rajbhandari et al. (ZeRO, SC'20): bf16 weights (2 bytes a parameter), gradients at
//! `grad_bytes`, Adam's fp32 master weights, momentum and variance (12 bytes). Stage 1 shards the
//! optimizer states over the data x context ranks, stage 2 the gradients too, stage 3 the weights;
//! expert parameters shard over the data ranks that hold the same expert (dp·cp/ep).
//!
//! Activations follow Korthikanti et al. (MLSys'23, "Reducing Activation Recomputation"), a layer
//! storing s·b·h·(10 + 24/t) + 5·a·s²·b/t bytes without sequence parallelism and s·b·h·34/t with
//! it, generalised to grouped-query attention and any MLP width. Selective recomputation (or flash
//! attention) drops the a·s² terms; full recomputation keeps each layer's input and one layer's
//! working set. Each schedule holds its own number of micro-batches in flight on each stage
//! (models/pipeline_schedule.hpp: 1F1B's stage i min(m, pp - i), interleaving its warm-up of
//! 2(pp - 1 - i) + (v - 1)·pp + 1 chunks, at most all m; DualPipe pp + 1 and two copies of the parameters). The stage that needs the most sets
//! the answer.

#include <string>

#include "models/workload.hpp"

namespace ctwin {

struct MemoryUse {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  int stage = 0;  //!< the pipeline stage that needs the most
  double total() const { return weights + gradients + optimizer + activations; }
};

MemoryUse memory_per_gpu(const Workload& w);

//! Activation offload (layout.activation_offload = f): a stage keeps the micro-batch in hand and
//! 1 - f of the others'. Each micro-batch's share f goes to the host during its forward and comes
//! back during its backward over `host_bandwidth`; what outlasts that pass is exposed.
//! The exposed seconds a step on `stage`, whose one micro-batch computes in `stage_compute_s`.
double offload_exposed_s(const Workload& w, int stage, double stage_compute_s, int micro_batches);

//! "" when the layout fits in `capacity_bytes` (0: unknown, always fits); else why not.
std::string check_memory(const Workload& w, double capacity_bytes);

//! For a layout that does not fit: the single change to its schedule, its recomputation or its
//! micro-batch that fits and costs least in compute plus pipeline bubble (an estimate: the
//! collectives aside), said as a scenario would write it with its cost; "" when none fits.
std::string cheapest_fit(const Workload& w, double capacity_bytes, int gpus_per_node);

}  // namespace ctwin
