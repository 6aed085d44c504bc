#pragma once
//! Step time as an output of the twin: the workload's compute, and its collectives run as SimGrid
//! flows on the fabric in a given state (slow GPUs, degraded or dead ports, a shrunk DP width).
//!
//! Ranks are laid out in the layout's rank order (Megatron-LM's by default: tensor fastest, then
//! context, data, pipeline) and packed onto nodes in order; a tensor-parallel group sits inside a
//! node, so tensor rank t's GPUs use rails of their own. A ring collective's phases are identical (each rank sends a 1/p
//! chunk to its neighbour over the same links), so one phase is simulated, with every ring of the
//! kind running at once, and multiplied by the phase count. Across nodes, tensor rank t's GPUs use
//! only their own rails, so one healthy tensor rank stands for the others; every rank whose rails
//! hold a degraded port is simulated too: nothing is assumed symmetric that the state breaks.

#include <map>
#include <string>

#include "models/workload.hpp"
#include "sim/simgrid/comm_fabric.hpp"

namespace ctwin {

const char* to_string(AllReduceAlgorithm a);

struct StepState {
  FabricState fabric;
  std::map<int, double> gpu_speed;  //!< by global GPU id; the job runs at the slowest
  int dp_width = 0;                 //!< data-parallel replicas running (0: all); the global batch is kept
  double timeout_s = 600;           //!< a collective that cannot finish hangs until this watchdog
};

struct StepBreakdown {
  double step_s = 0;
  double compute_s = 0;       //!< micro-batches x forward + backward on one stage, at the slowest GPU
  double bubble_s = 0;        //!< pipeline fill and drain
  double tp_exposed_s = 0;
  double pp_exposed_s = 0;
  double dp_exposed_s = 0;
  double ep_exposed_s = 0;
  double cp_exposed_s = 0;
  double offload_exposed_s = 0;  //!< activations to and from host memory, beyond what the passes hide
  double tp_collective_s = 0; //!< one tensor-parallel all-reduce
  double pp_transfer_s = 0;   //!< one activation transfer between stages
  double dp_collective_s = 0; //!< the step's gradient reduction, unhidden (ZeRO-3: a ring all-reduce of one unit's parameters)
  double dp_traffic_s = 0;    //!< time the step's data-parallel traffic holds the links (ZeRO-3: every gather and reduce-scatter)
  double ep_collective_s = 0; //!< one expert-parallel all-to-all (token dispatch or combine)
  double cp_transfer_s = 0;   //!< one step of the context-parallel ring: a K/V chunk to the neighbour
  double tokens_per_s = 0;
  double mfu = 0;
  bool hung = false;          //!< a collective crossed a dead port: the step never completes
  int gpus = 0;
};

//! Time of a ring all-reduce of `bytes` over each group (all groups at once): 2(p-1) phases of
//! bytes/p. `groups` hold global GPU ids in ring order.
PhaseResult ring_all_reduce(const CommFabricSpec& fabric, const FabricState& state,
                            const std::vector<std::vector<int>>& groups, double bytes, double timeout_s);
//! NCCL's double binary tree: two trees, each carrying half the bytes, where the inner nodes of
//! one are the leaves of the other. The bytes go in chunks, reduced up and broadcast down in a
//! pipeline; every edge of both trees carries a chunk each way at once. The phase is simulated once
//! and the whole takes (chunks + 2 x depth - 1) phases: log p latency, unlike a ring's 2(p - 1).
PhaseResult tree_all_reduce(const CommFabricSpec& fabric, const FabricState& state,
                            const std::vector<std::vector<int>>& groups, double bytes, double timeout_s);
//! Reduce-scatter inside each node, a ring all-reduce of the node's share on each rail, then an
//! all-gather inside each node (NCCL's hierarchical variant). Groups must hold whole nodes.
PhaseResult hierarchical_all_reduce(const CommFabricSpec& fabric, const FabricState& state,
                                    const std::vector<std::vector<int>>& groups, double bytes, double timeout_s);

//! Every collective of a step once, at the fabric's state: what the SimGrid side answers.
struct Collectives {
  double tp_s = 0, pp_s = 0, dp_s = 0, ep_s = 0, cp_s = 0;  //!< as in StepBreakdown's *_collective_s / *_transfer_s
  bool hung = false;
};
Collectives collectives_of(const StepBreakdown& b);

//! The workload as `dp_width` replicas run it (0: all): the global batch is kept, so each replica
//! takes more micro-batches (the slowest path takes the ceiling of the share).
Workload at_width(const Workload& workload, int dp_width);
//! Which collectives to simulate; the others are taken as known.
struct CollectiveSet {
  bool tp = true, pp = true, dp = true, ep = true, cp = true;
};
//! Simulates the step's collectives on the fabric (the costly part): those in `which`; the rest
//! (and a hang among them) come from `known`.
Collectives simulate_collectives(const Workload& workload, const CommFabricSpec& fabric, const StepState& state,
                                 AllReduceAlgorithm dp_algorithm, const CollectiveSet& which = {}, const Collectives& known = {});
//! Adds compute, bubble and the exposed part of each collective into a step (arithmetic only).
StepBreakdown assemble_step(const Workload& workload, const Collectives& collectives, double slowest_speed, double timeout_s);
double slowest_speed(const StepState& state, int gpus);

StepBreakdown step_time(const Workload& workload, const CommFabricSpec& fabric, const StepState& state,
                        AllReduceAlgorithm dp_algorithm = AllReduceAlgorithm::Ring);

//! What a step sends over a node's scale-out link: the time each kind of traffic holds it, at the
//! link's full rate (a GPU's sends on the critical stage), and the part of it the step waits for.
//! Only transfers between nodes count: each kind is weighed by the share of its neighbour pairs
//! that sit on different nodes (the layout's rank order, packed `gpus_per_node` to a node).
//! It is what a checkpoint crossing the compute fabric contends with during a trial.
struct ScaleOutTraffic {
  double dp_s = 0, pp_s = 0, cp_s = 0, ep_s = 0;
  double exposed_s = 0;
  double total_s() const { return dp_s + pp_s + cp_s + ep_s; }
};
ScaleOutTraffic scale_out_traffic(const Workload& workload, const StepBreakdown& step, int gpus_per_node);

}  // namespace ctwin
