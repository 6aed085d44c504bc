#include "models/layout_variants.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

#include "models/memory.hpp"

namespace ctwin {

namespace {

constexpr int kLargestMicroBatch = 16;

//! The order of the dimensions that are split (degree > 1): orders that differ only in where a
//! degree-1 dimension sits place every rank alike.
std::vector<RankDim> effective_order(const ParallelLayout& p) {
  std::vector<RankDim> out;
  for (RankDim d : p.rank_order)
    if (degree(p, d) > 1) out.push_back(d);
  return out;
}

struct FieldBuilder {
  const Workload& base;
  int gpus_per_node;
  double memory;
  LayoutField field;

  void add(const std::string& value, const std::function<void(ParallelLayout&)>& change) {
    LayoutVariant v{value, base, ""};
    change(v.workload.layout);
    v.excluded = check_layout(v.workload, gpus_per_node);
    if (v.excluded.empty()) v.excluded = check_memory(v.workload, memory);
    field.variants.push_back(std::move(v));
  }
};

}  // namespace

std::vector<LayoutField> plausible_layouts(const Workload& w, int gpus_per_node, double gpu_memory_bytes) {
  const ParallelLayout& p = w.layout;
  std::vector<LayoutField> out;
  auto start = [&](std::string name, std::vector<std::string> pointers, std::string base_value, bool same_collectives) {
    return FieldBuilder{w, gpus_per_node, gpu_memory_bytes, {std::move(name), std::move(pointers), std::move(base_value), {}, same_collectives}};
  };
  const std::string par = "/workload/parallel/";

  // Rank order: tensor fastest, the rest in every order that places ranks differently.
  if ((p.cp > 1) + (p.dp > 1) + (p.pp > 1) > 1) {
    FieldBuilder f = start("rank_order", {par + "rank_order"}, rank_order_text(p.rank_order), false);
    std::vector<std::vector<RankDim>> seen{effective_order(p)};
    f.add(rank_order_text(p.rank_order), [](ParallelLayout&) {});
    std::array<RankDim, 3> rest{RankDim::Context, RankDim::Data, RankDim::Pipeline};
    do {
      const std::array<RankDim, 4> order{RankDim::Tensor, rest[0], rest[1], rest[2]};
      ParallelLayout trial = p;
      trial.rank_order = order;
      const std::vector<RankDim> key = effective_order(trial);
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
      seen.push_back(key);
      f.add(rank_order_text(order), [order](ParallelLayout& l) { l.rank_order = order; });
    } while (std::next_permutation(rest.begin(), rest.end()));
    out.push_back(std::move(f.field));
  }
  if (p.tp > 1) {
    FieldBuilder f = start("sequence_parallel", {par + "sequence_parallel"}, p.sequence_parallel ? "true" : "false", false);
    for (bool sp : {false, true}) f.add(sp ? "true" : "false", [sp](ParallelLayout& l) { l.sequence_parallel = sp; });
    out.push_back(std::move(f.field));
  }
  if (p.pp > 1) {
    // Interleaving by v splits every stage into v chunks. An even split cuts equal chunks (v divides
    // every stage's units); stated stage sizes stand for an explicit layout, whose chunks may differ,
    // so any v up to the smallest stage's layers (a chunk holds at least one).
    const std::vector<int> stages = stage_layers(w);
    const bool even = p.stage_layers.empty();
    int common = 0, smallest = stages.empty() ? 0 : *std::min_element(stages.begin(), stages.end());
    for (std::size_t i = 0; i < stages.size(); ++i)
      common = std::gcd(common, stages[i] + (even && i == 0 && p.embedding_as_layer) + (even && i + 1 == stages.size() && p.loss_as_layer));
    FieldBuilder f = start("virtual_stages", {par + "virtual_stages"}, std::to_string(p.virtual_stages), true);
    const int largest = even ? common : smallest;
    for (int v = 1; v <= std::max(largest, p.virtual_stages); ++v)
      if (v == p.virtual_stages || (even ? common % v == 0 : v <= smallest)) f.add(std::to_string(v), [v](ParallelLayout& l) { l.virtual_stages = v; });
    out.push_back(std::move(f.field));
    if (p.stage_layers.empty()) {
      auto split_name = [](bool e, bool l) { return std::string(e && l ? "both" : e ? "embedding" : l ? "loss" : "none"); };
      FieldBuilder s = start("embedding_loss_split", {par + "embedding_as_layer", par + "loss_as_layer"},
                             split_name(p.embedding_as_layer, p.loss_as_layer), false);
      for (bool e : {false, true})
        for (bool l : {false, true})
          s.add(split_name(e, l), [e, l](ParallelLayout& x) { x.embedding_as_layer = e, x.loss_as_layer = l; });
      out.push_back(std::move(s.field));
    }
  }
  if (p.cp > 1) {
    FieldBuilder f = start("cp_algorithm", {par + "cp_algorithm"}, p.cp_algorithm == CpAlgorithm::Ring ? "ring" : "all_gather", true);
    f.add("ring", [](ParallelLayout& l) { l.cp_algorithm = CpAlgorithm::Ring; });
    f.add("all_gather", [](ParallelLayout& l) { l.cp_algorithm = CpAlgorithm::AllGather; });
    out.push_back(std::move(f.field));
  }
  {
    const int per_replica = p.global_batch / std::max(1, p.dp);
    FieldBuilder f = start("micro_batch", {par + "micro_batch"}, std::to_string(p.micro_batch), false);
    for (int m = 1; m <= std::max(std::min(per_replica, kLargestMicroBatch), p.micro_batch); ++m)
      if (m == p.micro_batch || per_replica % m == 0) f.add(std::to_string(m), [m](ParallelLayout& l) { l.micro_batch = m; });
    out.push_back(std::move(f.field));
  }
  return out;
}

}  // namespace ctwin
