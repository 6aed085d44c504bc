#include "sim/step_model.hpp"

#include "models/memory.hpp"
#include "models/pipeline_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace ctwin {

const char* to_string(AllReduceAlgorithm a) {
  switch (a) {
    case AllReduceAlgorithm::Ring: return "ring";
    case AllReduceAlgorithm::Tree: return "tree";
    case AllReduceAlgorithm::Hierarchical: return "hierarchical";
  }
  return "?";
}

namespace {

//! One phase of every ring at once: each member sends `bytes` to the next.
std::vector<Flow> ring_phase(const std::vector<std::vector<int>>& groups, double bytes) {
  std::vector<Flow> flows;
  for (const auto& g : groups)
    for (std::size_t i = 0; g.size() > 1 && i < g.size(); ++i) flows.push_back({g[i], g[(i + 1) % g.size()], bytes});
  return flows;
}

PhaseResult times(PhaseResult r, double n) {
  if (!r.hung) r.seconds *= n;
  return r;
}

PhaseResult plus(PhaseResult a, const PhaseResult& b) {
  if (a.hung || b.hung) return {std::max(a.hung ? a.seconds : 0.0, b.hung ? b.seconds : 0.0), true};
  a.seconds += b.seconds;
  return a;
}

//! A rank's place in the grid.
struct Coords {
  int tensor = 0, context = 0, data = 0, stage = 0;
};

//! Global GPU ids in the layout's rank order (Megatron-LM's by default: tensor fastest, then
//! context, data, pipeline), packed onto nodes in order.
struct Ranks {
  const ParallelLayout& p;
  int degree(RankDim d) const { return ctwin::degree(p, d); }
  static int& at(Coords& c, RankDim d) {
    switch (d) {
      case RankDim::Tensor: return c.tensor;
      case RankDim::Context: return c.context;
      case RankDim::Data: return c.data;
      case RankDim::Pipeline: break;
    }
    return c.stage;
  }
  int gpu(int stage, int data, int context, int tensor) const {
    Coords c{tensor, context, data, stage};
    int id = 0, stride = 1;
    for (RankDim d : p.rank_order) {
      id += at(c, d) * stride;
      stride *= degree(d);
    }
    return id;
  }
  Coords coords(int gpu) const {
    Coords c;
    for (RankDim d : p.rank_order) {
      at(c, d) = gpu % degree(d);
      gpu /= degree(d);
    }
    return c;
  }
};

}  // namespace

PhaseResult ring_all_reduce(const CommFabricSpec& fabric, const FabricState& state,
                            const std::vector<std::vector<int>>& groups, double bytes, double timeout_s) {
  std::size_t p = 0;
  for (const auto& g : groups) p = std::max(p, g.size());
  if (p < 2 || bytes <= 0) return {};
  const PhaseResult phase = simulate_phase(fabric, state, ring_phase(groups, bytes / static_cast<double>(p)), timeout_s);
  return times(phase, 2.0 * static_cast<double>(p - 1));
}

PhaseResult tree_all_reduce(const CommFabricSpec& fabric, const FabricState& state,
                            const std::vector<std::vector<int>>& groups, double bytes, double timeout_s) {
  std::size_t p = 0;
  for (const auto& g : groups) p = std::max(p, g.size());
  if (p < 2 || bytes <= 0) return {};
  // NCCL-like chunking: at most 64 chunks per tree, none under 512 KiB.
  const double half = bytes / 2;
  const double chunks = std::clamp(std::floor(half / (512.0 * 1024)), 1.0, 64.0);
  const double chunk = half / chunks;
  std::vector<Flow> flows;
  for (const auto& g : groups) {
    const std::size_t n = g.size();
    // Tree 1: a heap over positions; tree 2: the same over the reversed order, so leaves and inner nodes swap.
    for (int tree = 0; tree < 2; ++tree)
      for (std::size_t i = 1; i < n; ++i) {
        const std::size_t parent = (i - 1) / 2;
        const int child_gpu = tree == 0 ? g[i] : g[n - 1 - i];
        const int parent_gpu = tree == 0 ? g[parent] : g[n - 1 - parent];
        flows.push_back({child_gpu, parent_gpu, chunk});  // reduce, up
        flows.push_back({parent_gpu, child_gpu, chunk});  // broadcast, down
      }
  }
  const double depth = std::floor(std::log2(static_cast<double>(p)));
  return times(simulate_phase(fabric, state, flows, timeout_s), chunks + 2 * depth - 1);
}

PhaseResult hierarchical_all_reduce(const CommFabricSpec& fabric, const FabricState& state,
                                    const std::vector<std::vector<int>>& groups, double bytes, double timeout_s) {
  std::vector<std::vector<int>> inside, across;
  std::size_t k = 0, n = 0;
  for (const auto& g : groups) {
    std::map<int, std::vector<int>> by_node;
    for (int gpu : g) by_node[gpu / fabric.gpus_per_node].push_back(gpu);
    k = by_node.begin()->second.size();
    n = by_node.size();
    for (auto& [node, members] : by_node) {
      if (members.size() != k) return ring_all_reduce(fabric, state, groups, bytes, timeout_s);  // uneven: flat
      inside.push_back(members);
    }
    for (std::size_t j = 0; j < k; ++j) {
      across.emplace_back();
      for (auto& [node, members] : by_node) across.back().push_back(members[j]);
    }
  }
  if (k < 2 || n < 2) return ring_all_reduce(fabric, state, groups, bytes, timeout_s);
  const double share = bytes / static_cast<double>(k);
  // Reduce-scatter and all-gather inside the nodes: k - 1 phases of bytes/k each way.
  const PhaseResult local = times(simulate_phase(fabric, state, ring_phase(inside, share), timeout_s), 2.0 * static_cast<double>(k - 1));
  return plus(local, ring_all_reduce(fabric, state, across, share, timeout_s));
}

Collectives collectives_of(const StepBreakdown& b) {
  return {b.tp_collective_s, b.pp_transfer_s, b.dp_collective_s, b.ep_collective_s, b.cp_transfer_s, b.hung};
}

Workload at_width(const Workload& given, int dp_width) {
  Workload w = given;
  if (dp_width > 0 && dp_width < given.layout.dp) w.layout.dp = dp_width;
  return w;
}

double slowest_speed(const StepState& state, int gpus) {
  double slowest = 1.0;
  for (const auto& [gpu, speed] : state.gpu_speed)
    if (gpu < gpus) slowest = std::min(slowest, speed);
  return slowest;
}

Collectives simulate_collectives(const Workload& w, const CommFabricSpec& fabric, const StepState& state,
                                 AllReduceAlgorithm dp_algorithm, const CollectiveSet& which, const Collectives& known) {
  const WorkloadCosts c = workload_costs(w);
  const ParallelLayout& p = w.layout;
  const Ranks ranks{p};
  const double share = w.efficiency.bandwidth;
  Collectives out = known;
  for (auto [simulated, seconds] : {std::pair{which.tp, &out.tp_s}, {which.pp, &out.pp_s}, {which.dp, &out.dp_s}, {which.ep, &out.ep_s}, {which.cp, &out.cp_s}})
    if (simulated) *seconds = 0;
  auto take = [&](const PhaseResult& r) {
    out.hung |= r.hung;
    return r.seconds / share;
  };
  // Tensor parallel: the first group and every group with a degraded NVLink port.
  if (which.tp && c.tp_bytes > 0) {
    std::set<std::tuple<int, int, int>> chosen{{0, 0, 0}};
    for (const auto& [gpu, factor] : state.fabric.nvlink_factor)
      if (factor != 1.0 && gpu < c.gpus) {
        const Coords at = ranks.coords(gpu);
        chosen.insert({at.stage, at.data, at.context});
      }
    std::vector<std::vector<int>> groups;
    for (const auto& [stage, data, context] : chosen) {
      groups.emplace_back();
      for (int t = 0; t < p.tp; ++t) groups.back().push_back(ranks.gpu(stage, data, context, t));
    }
    out.tp_s = take(ring_all_reduce(fabric, state.fabric, groups, c.tp_bytes, state.timeout_s));
  }
  // Across nodes, the GPUs of tensor rank t use only rails t, t + tp, ...: the rails of different
  // tensor ranks are disjoint and, when healthy, identical. Simulate tensor rank 0 and every rank
  // whose rails hold a degraded port; the others run as rank 0 does.
  std::set<int> tensor_ranks{0};
  for (const auto& [gpu, factor] : state.fabric.nic_factor)
    if (factor != 1.0 && gpu < c.gpus) tensor_ranks.insert(ranks.coords(gpu).tensor);
  // Pipeline: every stage boundary sends at once.
  if (which.pp && c.pp_bytes > 0) {
    std::vector<Flow> flows;
    for (int s = 0; s + 1 < p.pp; ++s)
      for (int d = 0; d < p.dp; ++d)
        for (int x = 0; x < p.cp; ++x)
          for (int t : tensor_ranks) flows.push_back({ranks.gpu(s, d, x, t), ranks.gpu(s + 1, d, x, t), c.pp_bytes});
    out.pp_s = take(simulate_phase(fabric, state.fabric, flows, state.timeout_s));
  }
  // Data parallel, over the data and context ranks of each stage: every group at once.
  if (which.dp && c.dp_bytes > 0) {
    std::vector<std::vector<int>> groups;
    for (int s = 0; s < p.pp; ++s)
      for (int t : tensor_ranks) {
        groups.emplace_back();
        for (int d = 0; d < p.dp; ++d)
          for (int x = 0; x < p.cp; ++x) groups.back().push_back(ranks.gpu(s, d, x, t));
      }
    out.dp_s = take(dp_algorithm == AllReduceAlgorithm::Hierarchical
                        ? hierarchical_all_reduce(fabric, state.fabric, groups, c.dp_bytes, state.timeout_s)
                    : dp_algorithm == AllReduceAlgorithm::Tree ? tree_all_reduce(fabric, state.fabric, groups, c.dp_bytes, state.timeout_s)
                                                               : ring_all_reduce(fabric, state.fabric, groups, c.dp_bytes, state.timeout_s));
  }
  // Expert parallel: consecutive data ranks form an EP group; its all-to-all sends every member
  // 1/ep of each GPU's routed tokens, all at once.
  if (which.ep && c.ep_bytes > 0) {
    std::vector<Flow> flows;
    for (int s = 0; s < p.pp; ++s)
      for (int first = 0; first + p.ep <= p.dp; first += p.ep)
        for (int x = 0; x < p.cp; ++x)
          for (int t : tensor_ranks)
            for (int a = first; a < first + p.ep; ++a)
              for (int b = first; b < first + p.ep; ++b)
                if (a != b) flows.push_back({ranks.gpu(s, a, x, t), ranks.gpu(s, b, x, t), c.ep_bytes / p.ep});
    out.ep_s = take(simulate_phase(fabric, state.fabric, flows, state.timeout_s));
  }
  // Context parallel: one step of every K/V ring at once.
  if (which.cp && c.cp_bytes > 0) {
    std::vector<Flow> flows;
    for (int s = 0; s < p.pp; ++s)
      for (int d = 0; d < p.dp; ++d)
        for (int t : tensor_ranks)
          for (int x = 0; x < p.cp; ++x) flows.push_back({ranks.gpu(s, d, x, t), ranks.gpu(s, d, (x + 1) % p.cp, t), c.cp_bytes});
    out.cp_s = take(simulate_phase(fabric, state.fabric, flows, state.timeout_s));
  }
  return out;
}

StepBreakdown assemble_step(const Workload& w, const Collectives& k, double slowest, double timeout_s) {
  const WorkloadCosts c = workload_costs(w);
  if (c.stages.empty()) throw std::invalid_argument("step model: the layers do not split over the pipeline stages (check_layout refuses this layout)");
  const ParallelLayout& p = w.layout;
  const Efficiency& e = w.efficiency;
  const double m = c.micro_batches;
  const double speed = std::max(slowest, 1e-9);
  StepBreakdown b;
  b.gpus = c.gpus;
  b.tp_collective_s = k.tp_s;
  b.pp_transfer_s = k.pp_s;
  b.dp_collective_s = k.dp_s;
  b.ep_collective_s = k.ep_s;
  b.cp_transfer_s = k.cp_s;
  // Exposed K/V traffic of one layer and micro-batch. A ring step hides behind the attention of the
  // chunk in hand; an all-gather (cp - 1 ring phases) behind the attention of the whole pass.
  double cp_layer_s = 0;
  if (c.cp_passes_per_layer > 0) {
    const double steps = p.cp - 1, chunk = c.cp_chunk_attention_s / speed;
    const double pass = p.cp_algorithm == CpAlgorithm::Ring ? steps * (k.cp_s - e.cp_overlap * std::min(k.cp_s, chunk))
                                                            : steps * k.cp_s - e.cp_overlap * std::min(steps * k.cp_s, p.cp * chunk);
    cp_layer_s = pass * c.cp_passes_per_layer;
  }
  const double tp_layer_s = k.tp_s * c.tp_collectives_per_layer * (1 - e.tp_overlap);
  const double ep_layer_s = k.ep_s * c.ep_collectives_per_layer * (1 - e.ep_overlap);
  // 1F1B over uneven stages: the slowest stage paces the steady state; the others' time for one
  // micro-batch is the fill and drain (divided by the virtual stages when interleaved).
  std::size_t critical = 0;
  double total = 0, critical_s = -1;
  for (std::size_t i = 0; i < c.stages.size(); ++i) {
    const StageCost& st = c.stages[i];
    const double stage_s = st.compute_s / speed + st.layers * (tp_layer_s + ep_layer_s + cp_layer_s);
    total += stage_s;
    if (stage_s > critical_s) critical_s = stage_s, critical = i;
  }
  const StageCost& slowest_stage = c.stages[critical];
  b.compute_s = slowest_stage.compute_s / speed * m;
  b.tp_exposed_s = slowest_stage.layers * tp_layer_s * m;
  b.ep_exposed_s = slowest_stage.layers * ep_layer_s * m;
  b.cp_exposed_s = slowest_stage.layers * cp_layer_s * m;
  // The fill and drain the schedule leaves idle (models/pipeline_schedule.hpp).
  b.bubble_s = (total - critical_s) * bubble_factor(p, c.micro_batches);
  // DualPipe runs a forward chunk beside a backward one: the expert all-to-alls of each hide behind
  // the other's compute, all but the fill's and drain's.
  if (schedule_hides_all_to_alls(p)) b.ep_exposed_s *= (p.pp - 1.0) / (m + p.pp - 1);
  // Forward activations and backward gradients on the critical path of fill, steady state and drain.
  if (p.pp > 1) b.pp_exposed_s = 2.0 * k.pp_s * (m * chunks_per_stage(p) + p.pp - 1) * (1 - e.tp_overlap);
  if (c.fsdp_units > 0) {
    // ZeRO-3 (FSDP's prefetch): a micro-batch waits for its first unit's gather; each next unit's
    // gather runs beside the unit before it in forward, and each unit's gather and gradient
    // reduce-scatter beside its backward; whatever outlasts that compute is exposed.
    const double gather = k.dp_s / 2, scatter = k.dp_s / 2 * e.grad_bytes / 2;
    const double unit = slowest_stage.compute_s / speed / std::max(1, slowest_stage.layers);
    const double forward = unit * (p.recompute == Recompute::Full ? 0.25 : 1.0 / 3), backward = unit - forward;
    const double units = c.fsdp_units;
    b.dp_exposed_s = m * (gather + (units - 1) * std::max(0.0, gather - forward) + units * std::max(0.0, gather + scatter - backward));
    b.dp_traffic_s = m * units * (2 * gather + scatter);
  } else {
    b.dp_exposed_s = k.dp_s * (1 - e.dp_overlap);
    b.dp_traffic_s = k.dp_s;
  }
  b.offload_exposed_s = offload_exposed_s(w, static_cast<int>(critical), slowest_stage.compute_s / speed, c.micro_batches);
  b.hung = k.hung;
  b.step_s = b.compute_s + b.bubble_s + b.tp_exposed_s + b.pp_exposed_s + b.dp_exposed_s + b.ep_exposed_s + b.cp_exposed_s + b.offload_exposed_s;
  if (b.hung) b.step_s = timeout_s;
  b.tokens_per_s = b.hung ? 0 : c.tokens_per_step / b.step_s;
  b.mfu = b.hung ? 0 : c.model_flops_per_token * c.tokens_per_step / (b.step_s * c.gpus * w.gpu_peak_flops);
  return b;
}

namespace {

//! The share of neighbour pairs, (a, b) GPU ids, on different nodes.
template <typename Pairs>
double between_nodes(int gpus_per_node, Pairs&& each_pair) {
  long long pairs = 0, across = 0;
  each_pair([&](int a, int b) {
    ++pairs;
    across += a / gpus_per_node != b / gpus_per_node;
  });
  return pairs > 0 ? static_cast<double>(across) / static_cast<double>(pairs) : 0.0;
}

}  // namespace

ScaleOutTraffic scale_out_traffic(const Workload& w, const StepBreakdown& b, int gpus_per_node) {
  const WorkloadCosts c = workload_costs(w);
  const ParallelLayout& p = w.layout;
  const Ranks ranks{p};
  const int per_node = std::max(1, gpus_per_node);
  // Tensor rank 0 stands for the others: their groups are the same shape on other rails.
  const double dp_share = between_nodes(per_node, [&](auto pair) {
    for (int s = 0; s < p.pp; ++s) {
      std::vector<int> ring;
      for (int d = 0; d < p.dp; ++d)
        for (int x = 0; x < p.cp; ++x) ring.push_back(ranks.gpu(s, d, x, 0));
      if (ring.size() > 1)
        for (std::size_t i = 0; i < ring.size(); ++i) pair(ring[i], ring[(i + 1) % ring.size()]);
    }
  });
  const double pp_share = between_nodes(per_node, [&](auto pair) {
    for (int s = 0; s + 1 < p.pp; ++s)
      for (int d = 0; d < p.dp; ++d)
        for (int x = 0; x < p.cp; ++x) pair(ranks.gpu(s, d, x, 0), ranks.gpu(s + 1, d, x, 0));
  });
  const double cp_share = between_nodes(per_node, [&](auto pair) {
    for (int s = 0; s < p.pp; ++s)
      for (int d = 0; d < p.dp; ++d)
        for (int x = 0; x < p.cp && p.cp > 1; ++x) pair(ranks.gpu(s, d, x, 0), ranks.gpu(s, d, (x + 1) % p.cp, 0));
  });
  const double ep_share = between_nodes(per_node, [&](auto pair) {
    for (int first = 0; p.ep > 1 && first + p.ep <= p.dp; first += p.ep)
      for (int a = first; a < first + p.ep; ++a)
        for (int z = first; z < first + p.ep; ++z)
          if (a != z) pair(ranks.gpu(0, a, 0, 0), ranks.gpu(0, z, 0, 0));
  });
  int layers = 0;
  for (const StageCost& st : c.stages) layers = std::max(layers, st.layers);
  const double m = c.micro_batches;
  ScaleOutTraffic t;
  t.dp_s = dp_share * b.dp_traffic_s;
  // A stage sends each micro-batch's activations forward and its gradients back, per virtual stage.
  if (p.pp > 1) t.pp_s = pp_share * 2 * m * chunks_per_stage(p) * b.pp_transfer_s;
  if (p.cp > 1) t.cp_s = cp_share * m * layers * c.cp_passes_per_layer * (p.cp - 1) * b.cp_transfer_s;
  if (p.ep > 1) t.ep_s = ep_share * m * layers * c.ep_collectives_per_layer * b.ep_collective_s;
  // The critical path's exposed transfers include other stages' (the pipeline's fill and drain):
  // on this link no more of a kind is exposed than it carries.
  t.exposed_s = std::min(t.dp_s, dp_share * b.dp_exposed_s) + std::min(t.pp_s, pp_share * b.pp_exposed_s) +
                std::min(t.cp_s, cp_share * b.cp_exposed_s) + std::min(t.ep_s, ep_share * b.ep_exposed_s);
  return t;
}

StepBreakdown step_time(const Workload& given, const CommFabricSpec& fabric, const StepState& state,
                        AllReduceAlgorithm dp_algorithm) {
  const Workload w = at_width(given, state.dp_width);
  const Collectives k = simulate_collectives(w, fabric, state, dp_algorithm);
  return assemble_step(w, k, slowest_speed(state, workload_costs(w).gpus), state.timeout_s);
}

}  // namespace ctwin
