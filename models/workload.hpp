#pragma once
//! What one training step asks of the cluster: the model's shape, the parallel layout and the
//! achieved efficiencies, turned into FLOPs, compute time per micro-batch and the bytes each
//! collective moves. Engine-neutral arithmetic; sim/step_model.* puts the collectives on the
//! SimGrid fabric and adds them up into a step time.
//!
//! FLOPs follow Narayanan et al. (SC'21, the Megatron-LM paper): a forward pass costs 2 FLOPs per
//! matmul parameter per token plus 4·s·h per layer for attention scores; training is forward + 2x
//! backward (model FLOPs: 6N + 12·s·h·l per token); full recomputation adds a forward
//! (8N + 16·s·h·l), selective recomputation the attention part (+4·s·h·l). Grouped-query attention
//! (Ainslie et al., 2023) shares each key/value head among heads / kv_heads query heads: the K and V
//! projections shrink by that factor (so N does), the score and value matmuls stay per query head,
//! and context parallelism moves only the key/value heads.

#include <array>
#include <string>
#include <vector>

#include "models/fabric.hpp"

namespace ctwin {

struct ModelShape {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;         //!< key/value heads (grouped-query attention); 0: as many as `heads`
  int ffn_hidden = 0;       //!< 0: 4 x hidden
  bool gated_mlp = false;   //!< SwiGLU: three matrices in the MLP instead of two
  int vocab = 0;
  int seq_len = 0;
  // Mixture of experts: `experts` MLPs per layer, each token routed to `top_k` of them.
  int experts = 1;
  int top_k = 1;
};

enum class Recompute { None, Selective, Full };

//! How context parallelism moves keys and values: passed round a ring, one chunk a step, each
//! step beside the attention of the chunk in hand; or all-gathered once a pass (Llama 3).
enum class CpAlgorithm { Ring, AllGather };

//! How the attention core runs. A fused flash kernel (FlashAttention, cuDNN's fused attention)
//! skips the blocks a causal mask hides, so its score and value matmuls do half of what the
//! model-FLOP count (12·s·h a token a layer) says; an unfused softmax attention computes them all.
enum class AttentionKernel { Flash, Full };

//! How the pipeline orders its micro-batches' forward and backward passes (models/pipeline_schedule.hpp).
enum class PipelineSchedule { OneFOneB, Interleaved, FlexibleInterleaved, ZeroBubbleH1, ZeroBubbleV, DualPipe };

//! A dimension of the rank grid. Expert parallelism is carved out of the data ranks.
enum class RankDim { Tensor, Context, Data, Pipeline };

struct ParallelLayout {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int virtual_stages = 1;   //!< interleaved 1F1B: model chunks per pipeline rank
  //! 1F1B with virtual_stages > 1 is Megatron's interleaved schedule (schedule_of says which runs).
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  int contiguous_micro_batches = 0;  //!< flexible interleaving's N (Llama 3 §3.3.2); 0: pp, Megatron's
  //! 0: all-reduce gradients; 1, 2: reduce-scatter gradients and all-gather the updated parameters
  //! (the same bytes, the same overlap); 3 (FSDP): parameters gathered per layer, every micro-batch.
  int zero_stage = 1;
  int micro_batch = 1;      //!< sequences per micro-batch
  int global_batch = 1;     //!< sequences per step
  Recompute recompute = Recompute::None;
  //! Share of a stage's saved activations moved to host memory between a micro-batch's forward and
  //! its backward (Megatron-Core's activation offloading); the micro-batch in hand stays on the GPU.
  double activation_offload = 0;
  //! Decoder layers on each pipeline stage; empty: an even split (of layers, or of layers plus the
  //! embedding and the loss when `embedding_as_layer` / `loss_as_layer` count them as one each).
  std::vector<int> stage_layers;
  bool embedding_as_layer = false;  //!< Megatron's --account-for-embedding-in-pipeline-split
  bool loss_as_layer = false;       //!< Megatron's --account-for-loss-in-pipeline-split
  //! Megatron's sequence parallelism: the activations outside the tensor-parallel GEMMs are split
  //! along the sequence, so each tensor rank stores and sends between stages 1/tp of them.
  bool sequence_parallel = false;
  CpAlgorithm cp_algorithm = CpAlgorithm::Ring;
  //! Fastest-varying first (Megatron-LM's default: tensor, context, data, pipeline).
  std::array<RankDim, 4> rank_order{RankDim::Tensor, RankDim::Context, RankDim::Data, RankDim::Pipeline};
};

//! Achieved efficiencies: what the fabric model does not see.
struct Efficiency {
  double gemm = 0.5;        //!< achieved fraction of peak FLOP/s in the layers' kernels, asymptotically in the hidden size
  //! The hidden size h at which the layers reach half of `gemm`: they run at gemm x h / (h + this).
  //! A layer's matrix products grow as h², its memory-bound element-wise work (norms,
  //! activations, residuals, casts) as h; 0: `gemm` whatever the size.
  double gemm_half_hidden = 0;
  //! The attention core's own fraction of peak (the flash kernel's score and value products,
  //! forward and backward, causal), reached at long sequences: it runs at attention x c / (c +
  //! attention_half_seq) for a chunk of c tokens (the sequence over cp). 0: as the layers.
  double attention = 0;
  double attention_half_seq = 0;
  //! The backward pass's own (dQ, dK and dV: twice the forward's products) at long chunks, and
  //! its half-length: kernels publish the two apart (FlashAttention-3 on H100 at head dim 128:
  //! backward 0.57 of peak, forward 0.66). Then `attention` is the forward's (and a recomputed
  //! forward's). 0: as the forward.
  double attention_backward = 0;
  double attention_backward_half_seq = 0;
  double tp_overlap = 0;    //!< share of tensor-parallel communication hidden behind compute
  double dp_overlap = 0;    //!< share of data-parallel communication hidden behind backward compute
  double ep_overlap = 0;    //!< share of the expert all-to-alls hidden (e.g. behind shared-expert compute)
  double cp_overlap = 0;    //!< achieved share of the K/V traffic the attention compute could hide
  double grad_bytes = 2;    //!< bytes per gradient element reduced (bf16: 2, fp32: 4)
  double bandwidth = 1;     //!< achieved share of the simulated collective bandwidth (NCCL, congestion)
};

struct Workload {
  ModelShape model;
  ParallelLayout layout;
  Efficiency efficiency;
  double gpu_peak_flops = 0;   //!< dense bf16
  double gemm_peak_flops = 0;  //!< the layers' projections and MLP (FP8 training: the FP8 peak); 0: gpu_peak_flops
  AttentionKernel attention = AttentionKernel::Flash;
  //! Bytes a second each way between one GPU and host memory (PCIe 5 x16: 64 GB/s raw, about 50 achieved).
  double host_bandwidth = 50e9;
};

//! How data-parallel gradients are all-reduced (NCCL's algorithms).
enum class AllReduceAlgorithm { Ring, Tree, Hierarchical };

//! A field the scenario left out that the step depends on, and the value the loader put there.
struct Assumption {
  std::string pointer;  //!< JSON pointer of the field, e.g. /workload/parallel/sequence_parallel
  std::string value;    //!< as it would be written in the scenario
};

//! A scenario's `workload` section: the workload, the fabric it runs on, the DP algorithm.
struct WorkloadSpec {
  Workload workload;
  CommFabricSpec fabric;
  AllReduceAlgorithm dp_algorithm = AllReduceAlgorithm::Ring;
  std::string efficiency_preset;  //!< the preset its efficiencies start from ("": all stated)
  std::string gpu_model;          //!< the cluster's, for the efficiencies other stacks reach on it
  std::vector<Assumption> assumed;  //!< fields defaulted, in the order the loader met them
};

//! "tp-cp-dp-pp": a rank order as a scenario writes it.
std::string rank_order_text(const std::array<RankDim, 4>& order);

//! One pipeline stage: its layers and what one micro-batch costs it.
struct StageCost {
  int layers = 0;
  double compute_s = 0;       //!< forward + backward of one micro-batch at full speed (the output layer on the last)
  double parameters = 0;      //!< held by one of its GPUs (after tensor and expert sharding)
  double expert_parameters = 0;  //!< the part of `parameters` in expert MLPs (replicated dp/ep times, not dp)
};

//! The per-step quantities the step model needs.
struct WorkloadCosts {
  double parameters = 0;               //!< total
  double active_parameters = 0;        //!< per token (MoE: top_k experts)
  double model_flops_per_token = 0;    //!< 6N + 12·s·h·l: what MFU counts
  double hardware_flops_per_token = 0; //!< with recomputation: what the GPUs do
  double tokens_per_step = 0;
  int micro_batches = 0;               //!< per pipeline, per step (the ceiling when dp does not divide the batch)
  std::vector<StageCost> stages;       //!< one a pipeline stage
  double tp_bytes = 0;                 //!< one tensor-parallel all-reduce (per layer, per micro-batch)
  int tp_collectives_per_layer = 0;    //!< per micro-batch: two in forward, two in backward (+2 recomputed)
  double pp_bytes = 0;                 //!< activations each tensor rank sends between stages per micro-batch
  //! Gradients each GPU of the largest stage reduces per step; under ZeRO-3 the bf16 parameters of
  //! one of its `fsdp_units` (the unit a ring all-reduce of which prices its all-gather and reduce-scatter).
  double dp_bytes = 0;
  int fsdp_units = 0;                  //!< ZeRO-3: units gathered one at a time on the largest stage (0: not sharded)
  double ep_bytes = 0;                 //!< tokens x top_k each GPU dispatches in one all-to-all (1/ep stays home)
  int ep_collectives_per_layer = 0;    //!< dispatch and combine, forward and backward (+2 recomputed)
  double cp_bytes = 0;                 //!< the K and V of one sequence chunk (this GPU's key/value heads)
  int cp_passes_per_layer = 0;         //!< K/V forward, again in backward, dK/dV back (+1 recomputed)
  double cp_chunk_attention_s = 0;     //!< attention of one query chunk against one K/V chunk, one pass
  int gpus = 0;
};

//! The layout's degree along one dimension of the rank grid.
int degree(const ParallelLayout& p, RankDim d);

//! Decoder layers on each pipeline stage, as the layout places them (empty if they do not fit).
std::vector<int> stage_layers(const Workload& w);

//! Checks the layout against the shape and the cluster; "" when fine, else the reason.
std::string check_layout(const Workload& w, int gpus_per_node);

WorkloadCosts workload_costs(const Workload& w);

}  // namespace ctwin
