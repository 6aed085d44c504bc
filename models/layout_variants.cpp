#include "models/layout_variants.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>

#include "models/efficiency_presets.hpp"
#include "models/memory.hpp"
#include "models/pipeline_schedule.hpp"

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

//! "zb_v", "interleaved, virtual_stages 4": a schedule as the scenario's fields would say it.
std::string schedule_text(const ParallelLayout& p) {
  const bool interleaved = p.schedule == PipelineSchedule::Interleaved || (p.schedule == PipelineSchedule::OneFOneB && p.virtual_stages > 1);
  if (interleaved) return "interleaved, virtual_stages " + std::to_string(p.virtual_stages);
  if (p.schedule == PipelineSchedule::FlexibleInterleaved)
    return std::string("flexible_interleaved, virtual_stages ") + std::to_string(p.virtual_stages) + ", contiguous_micro_batches " +
           std::to_string(p.contiguous_micro_batches > 0 ? p.contiguous_micro_batches : p.pp);
  return to_string(p.schedule);
}

std::string number_text(double x) {
  char t[32];
  std::snprintf(t, sizeof t, "%.4g", x);
  return t;
}

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
    std::vector<int> chunks;  // every count of chunks a stage's layers split into
    for (int v = 1; v <= largest; ++v)
      if (even ? common % v == 0 : v <= smallest) chunks.push_back(v);
    for (int v = 1; v <= std::max(largest, p.virtual_stages); ++v)
      if (v == p.virtual_stages || std::find(chunks.begin(), chunks.end(), v) != chunks.end())
        f.add(std::to_string(v), [v](ParallelLayout& l) {
          l.virtual_stages = v;
          if (l.schedule == PipelineSchedule::FlexibleInterleaved && v < 2) l.schedule = PipelineSchedule::OneFOneB, l.contiguous_micro_batches = 0;
        });
    out.push_back(std::move(f.field));
    // The schedule: 1F1B, the zero-bubble pair, DualPipe, and, at each count of chunks where
    // Megatron's interleaving does not fit, Llama 3's flexible interleaving with the most contiguous
    // micro-batches that do (fewer hold less and idle more).
    FieldBuilder sched = start("schedule", {par + "schedule", par + "contiguous_micro_batches"}, schedule_text(p), true);
    const bool base_listed = p.schedule != PipelineSchedule::Interleaved && p.schedule != PipelineSchedule::FlexibleInterleaved && p.virtual_stages == 1;
    if (!base_listed) sched.add(schedule_text(p), [](ParallelLayout&) {});
    for (const PipelineSchedule s : {PipelineSchedule::OneFOneB, PipelineSchedule::ZeroBubbleH1, PipelineSchedule::ZeroBubbleV, PipelineSchedule::DualPipe})
      sched.add(to_string(s), [s](ParallelLayout& l) { l.schedule = s, l.virtual_stages = 1, l.contiguous_micro_batches = 0; });
    for (const int v : chunks) {
      if (v < 2) continue;
      std::vector<int> contiguous{p.pp};
      for (int n = 1; n < p.pp; n *= 2) contiguous.insert(contiguous.begin() + 1, n);  // pp, then powers of two down to 1
      for (std::size_t k = 0; k < contiguous.size(); ++k) {
        const int n = contiguous[k];
        auto flexible = [v, n](ParallelLayout& l) { l.schedule = PipelineSchedule::FlexibleInterleaved, l.virtual_stages = v, l.contiguous_micro_batches = n; };
        ParallelLayout trial = p;
        flexible(trial);
        Workload w2 = w;
        w2.layout = trial;
        const bool fits = check_layout(w2, gpus_per_node).empty() && check_memory(w2, gpu_memory_bytes).empty();
        if (k == 0 && fits) break;  // N = pp is Megatron's interleaving: the virtual_stages field's
        if (fits || k + 1 == contiguous.size()) {
          if (schedule_text(trial) != schedule_text(p) || base_listed) sched.add(schedule_text(trial), flexible);
          break;
        }
      }
    }
    out.push_back(std::move(sched.field));
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
    auto name = [](Recompute r) { return std::string(r == Recompute::None ? "none" : r == Recompute::Selective ? "selective" : "full"); };
    FieldBuilder f = start("recompute", {par + "recompute"}, name(p.recompute), false);
    for (const Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) f.add(name(r), [r](ParallelLayout& l) { l.recompute = r; });
    out.push_back(std::move(f.field));
  }
  {
    FieldBuilder f = start("activation_offload", {par + "activation_offload"}, number_text(p.activation_offload), true);
    std::vector<double> shares{0, 0.5, 1};
    if (std::find(shares.begin(), shares.end(), p.activation_offload) == shares.end()) shares.push_back(p.activation_offload);
    std::sort(shares.begin(), shares.end());
    for (const double x : shares) f.add(number_text(x), [x](ParallelLayout& l) { l.activation_offload = x; });
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

std::vector<LayoutField> plausible_efficiencies(const Workload& w, std::string_view gpu_model) {
  std::vector<LayoutField> out;
  const Efficiency& e = w.efficiency;
  const std::string eff = "/workload/efficiency/";
  auto variant = [&](std::string value, const EfficiencyAlternative& a) {
    LayoutVariant v{std::move(value), w, ""};
    Efficiency& x = v.workload.efficiency;
    if (a.gemm > 0) x.gemm = a.gemm, x.gemm_half_hidden = a.gemm_half_hidden;
    if (a.sets_attention)
      x.attention = a.attention, x.attention_half_seq = a.attention_half_seq, x.attention_backward = a.attention_backward,
      x.attention_backward_half_seq = a.attention_backward_half_seq;
    return v;
  };
  auto gemm_text = [](double g, double half) { return number_text(g) + (half > 0 ? ", gemm_half_hidden " + number_text(half) : ""); };
  {
    // Each stack's fit on this GPU; elsewhere the spread between the H100 BF16 stacks at this width.
    LayoutField f{"gemm", {eff + "gemm", eff + "gemm_half_hidden", eff + "preset"}, gemm_text(e.gemm, e.gemm_half_hidden), {}, true};
    std::vector<EfficiencyAlternative> stacks = gemm_by_stack(gpu_model, w.gemm_peak_flops > 0);
    bool base_seen = false;
    for (const EfficiencyAlternative& a : stacks) base_seen |= a.gemm == e.gemm && a.gemm_half_hidden == e.gemm_half_hidden;
    if (!base_seen) f.variants.push_back(variant(f.base_value, EfficiencyAlternative{}));
    if (stacks.empty()) {
      const std::vector<EfficiencyAlternative> hopper = gemm_by_stack("H100", false);
      const double h = w.model.hidden;
      auto at = [h](const EfficiencyAlternative& a) { return a.gemm * (a.gemm_half_hidden > 0 ? h / (h + a.gemm_half_hidden) : 1.0); };
      const double spread = at(hopper[1]) / at(hopper[0]);
      for (const double factor : {1 / spread, spread}) {
        EfficiencyAlternative a{"", "", std::min(0.95, e.gemm * factor), e.gemm_half_hidden};
        f.variants.push_back(variant(gemm_text(a.gemm, a.gemm_half_hidden) + " (x" + number_text(factor) + ", the spread of the H100 stacks' fits)", a));
      }
    }
    for (const EfficiencyAlternative& a : stacks) f.variants.push_back(variant(gemm_text(a.gemm, a.gemm_half_hidden) + " (" + a.name + ")", a));
    for (LayoutVariant& v : f.variants)
      if (v.workload.efficiency.gemm == e.gemm && v.workload.efficiency.gemm_half_hidden == e.gemm_half_hidden) v.value = f.base_value;
    out.push_back(std::move(f));
  }
  if (const std::vector<EfficiencyAlternative> kernels = attention_by_kernel(gpu_model); !kernels.empty()) {
    auto attention_text = [](const Efficiency& x) {
      if (x.attention <= 0) return std::string("as the layers");
      return number_text(x.attention) + " (half at " + number_text(x.attention_half_seq) + ")" +
             (x.attention_backward > 0 ? ", backward " + number_text(x.attention_backward) + " (half at " + number_text(x.attention_backward_half_seq) + ")" : "");
    };
    LayoutField f{"attention", {eff + "attention", eff + "attention_backward", eff + "preset"}, attention_text(e), {}, true};
    bool base_seen = false;
    for (const EfficiencyAlternative& a : kernels) {
      LayoutVariant v = variant("", a);
      v.value = attention_text(v.workload.efficiency);
      base_seen |= v.value == f.base_value;
      if (v.value != f.base_value) v.value += " (" + a.name + ")";
      f.variants.push_back(std::move(v));
    }
    if (!base_seen) f.variants.insert(f.variants.begin(), variant(f.base_value, EfficiencyAlternative{}));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace ctwin
