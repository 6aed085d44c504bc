// The scenario's optional `workload` section (docs/scenario.md): model shape, parallel layout,
// efficiencies and the fabric. With it, the step time is an output (sim/step_model.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "models/efficiency_presets.hpp"
#include "models/json_reader.hpp"
#include "models/memory.hpp"
#include "models/pipeline_schedule.hpp"

namespace ctwin::json_reader {

namespace {

int count(Reader& r, const json& o, const std::string& p, const char* key, bool required, int fallback, int max = 100'000'000) {
  return static_cast<int>(r.integer(o, p, key, required, 1, max).value_or(fallback));
}

double share(Reader& r, const json& o, const std::string& p, const char* key, double fallback) {
  return r.probability(o, p, key).value_or(fallback);
}

//! `stage_layers` (one count a stage), or `first_stage_layers` / `last_stage_layers` with the
//! rest split evenly over the middle stages (Megatron's --decoder-first/last-pipeline-num-layers).
void read_stage_layers(Reader& r, const json& l, const std::string& lp, int layers, ParallelLayout& layout) {
  if (const auto it = l.find("stage_layers"); it != l.end()) {
    if (!it->is_array() || it->empty()) {
      r.problem(lp + "/stage_layers", "must be a non-empty array of layer counts, one a pipeline stage");
      return;
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& n = (*it)[i];
      if (!n.is_number_integer() || n.get<std::int64_t>() < 0 || n.get<std::int64_t>() > 100'000) {
        r.problem(lp + "/stage_layers/" + std::to_string(i), "must be a whole number of layers, at least 0");
        return;
      }
      layout.stage_layers.push_back(n.get<int>());
    }
    if (l.contains("first_stage_layers") || l.contains("last_stage_layers"))
      r.problem(lp + "/stage_layers", "give stage_layers or first_stage_layers / last_stage_layers, not both");
    return;
  }
  const auto first = r.integer(l, lp, "first_stage_layers", false, 0, 100'000);
  const auto last = r.integer(l, lp, "last_stage_layers", false, 0, 100'000);
  if (!first && !last) return;
  const int pp = layout.pp;
  if (pp < 2) {
    r.problem(lp + (first ? "/first_stage_layers" : "/last_stage_layers"), "needs pp of at least 2");
    return;
  }
  const int middle_stages = pp - (first ? 1 : 0) - (last ? 1 : 0);
  const int rest = layers - static_cast<int>(first.value_or(0)) - static_cast<int>(last.value_or(0));
  if (rest < 0 || (middle_stages == 0 ? rest != 0 : rest % middle_stages != 0)) {
    r.problem(lp, "the layers left after the first and last stages (" + std::to_string(rest) + ") must split evenly over the other " +
                      std::to_string(middle_stages) + " stages");
    return;
  }
  layout.stage_layers.assign(pp, middle_stages > 0 ? rest / middle_stages : 0);
  if (first) layout.stage_layers.front() = static_cast<int>(*first);
  if (last) layout.stage_layers.back() = static_cast<int>(*last);
}

//! "tp-cp-dp-pp" (fastest first); "ep" may stand just before "dp", as in Megatron's "tp-cp-ep-dp-pp".
void read_rank_order(Reader& r, const json& l, const std::string& lp, ParallelLayout& layout) {
  const auto text = r.string(l, lp, "rank_order", false);
  if (!text) return;
  std::vector<RankDim> order;
  std::string token, previous;
  bool ok = true;
  auto take = [&](const std::string& t) {
    if (t == "tp") order.push_back(RankDim::Tensor);
    else if (t == "cp") order.push_back(RankDim::Context);
    else if (t == "dp") order.push_back(RankDim::Data);
    else if (t == "pp") order.push_back(RankDim::Pipeline);
    else if (t != "ep") ok = false;
    if (previous == "ep" && t != "dp") ok = false;
    previous = t;
  };
  for (char ch : *text + "-") {
    if (ch != '-') {
      token += ch;
      continue;
    }
    take(token);
    token.clear();
  }
  if (previous == "ep") ok = false;  // "ep" must stand before "dp"
  std::vector<RankDim> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<RankDim> all{RankDim::Tensor, RankDim::Context, RankDim::Data, RankDim::Pipeline};
  if (!ok || sorted != all) {
    r.problem(lp + "/rank_order", "must order tp, cp, dp and pp once each, fastest first, e.g. \"tp-cp-dp-pp\" (\"ep\" only just before \"dp\")");
    return;
  }
  std::copy(order.begin(), order.end(), layout.rank_order.begin());
}

//! `efficiency`: a preset (named, or the one fitted for the GPU and precision when `gemm` is not
//! stated), then each field stated.
void read_efficiency(Reader& r, const json& wl, const std::string& p, const std::string& gpu_model, bool fp8, WorkloadSpec& spec) {
  const json* e = r.object(wl, p, "efficiency", false);
  const std::string ep = p + "/efficiency";
  const EfficiencyPreset* preset = nullptr;
  if (e && e->contains("preset")) {
    const auto name = r.string(*e, ep, "preset", true).value_or("");
    preset = find_efficiency_preset(name);
    if (!preset) r.problem(ep + "/preset", "unknown preset \"" + name + "\" (one of: " + efficiency_preset_names() + ")");
  } else if (!e || !e->contains("gemm")) {
    preset = efficiency_preset_for(gpu_model, fp8);
    if (!preset)
      r.problem(e ? ep + "/gemm" : ep, std::string("missing: no preset was fitted for GPU \"") + gpu_model + "\" in " +
                                           (fp8 ? "fp8" : "bf16") + " (presets: " + efficiency_preset_names() +
                                           "); state gemm (and bandwidth, overlaps) or name a preset");
  }
  Efficiency& eff = spec.workload.efficiency;
  if (preset) {
    eff = preset->efficiency;
    spec.efficiency_preset = preset->name;
  }
  if (!e) return;
  r.allow_only(*e, ep, {"preset", "gemm", "gemm_half_hidden", "attention", "attention_half_seq", "attention_backward", "attention_backward_half_seq", "tp_overlap", "dp_overlap", "ep_overlap", "cp_overlap", "grad_bytes", "bandwidth", "source"});
  eff.gemm = r.probability(*e, ep, "gemm").value_or(eff.gemm);
  eff.gemm_half_hidden = r.number(*e, ep, "gemm_half_hidden", false).value_or(eff.gemm_half_hidden);
  if (eff.gemm_half_hidden < 0 || eff.gemm_half_hidden > 1e7)
    r.problem(ep + "/gemm_half_hidden", "is a hidden size: between 0 and 10,000,000");
  // An efficiency that rises with the chunk a kernel sees, and the chunk at which it is half.
  auto by_chunk = [&](const char* key, double& efficiency, const char* half_key, double& half) {
    efficiency = r.probability(*e, ep, key).value_or(efficiency);
    half = r.number(*e, ep, half_key, false).value_or(half);
    if (half < 0 || half > 1e9) r.problem(ep + "/" + half_key, "is a sequence length in tokens: between 0 and 1,000,000,000");
    if (half > 0 && efficiency == 0) r.problem(ep + "/" + half_key, std::string("needs ") + key + " (the efficiency it is half of)");
  };
  by_chunk("attention", eff.attention, "attention_half_seq", eff.attention_half_seq);
  by_chunk("attention_backward", eff.attention_backward, "attention_backward_half_seq", eff.attention_backward_half_seq);
  eff.tp_overlap = share(r, *e, ep, "tp_overlap", eff.tp_overlap);
  eff.dp_overlap = share(r, *e, ep, "dp_overlap", eff.dp_overlap);
  eff.ep_overlap = share(r, *e, ep, "ep_overlap", eff.ep_overlap);
  eff.cp_overlap = share(r, *e, ep, "cp_overlap", eff.cp_overlap);
  eff.grad_bytes = r.number(*e, ep, "grad_bytes", false, 0.0).value_or(eff.grad_bytes);
  eff.bandwidth = r.number(*e, ep, "bandwidth", false, 0.0).value_or(eff.bandwidth);
  if (eff.bandwidth > 1) r.problem(ep + "/bandwidth", "is a share of the simulated bandwidth: at most 1");
}

//! A shrunk job keeps its global batch on fewer data-parallel ranks: ZeRO shards its states over
//! fewer of them and each replica runs more micro-batches, so the narrowest width allowed needs
//! the most memory. It must fit as the full width must.
void check_memory_when_shrunk(Reader& r, const Workload& w, const Scenario& s) {
  if (s.cluster.gpu_memory_bytes <= 0) return;
  const int replicas = s.job.nodes / std::max(1, s.elastic.replica_nodes);
  const int dp_per_replica = w.layout.dp / std::max(1, replicas);
  auto at = [&](int active) {
    Workload narrow = w;
    narrow.layout.dp = active * dp_per_replica;
    return narrow;
  };
  const std::string why = check_memory(at(s.elastic.min_replicas), s.cluster.gpu_memory_bytes);
  if (why.empty()) return;
  int fits = s.elastic.min_replicas + 1;
  while (fits < replicas && !check_memory(at(fits), s.cluster.gpu_memory_bytes).empty()) ++fits;
  r.problem("/policies/elastic/min_replicas", "shrunk to " + std::to_string(s.elastic.min_replicas) + " of " + std::to_string(replicas) +
                                                  " replicas (dp " + std::to_string(at(s.elastic.min_replicas).layout.dp) + "), the layout " +
                                                  why + "; the narrowest that fits is " + std::to_string(fits) + " replicas");
}

//! The fields the step depends on that the section leaves out, with the values read in their
//! place: only those that matter for this layout (no virtual stages without a pipeline).
std::vector<Assumption> assumptions(const json& wl, const WorkloadSpec& spec) {
  const Workload& w = spec.workload;
  const ParallelLayout& l = w.layout;
  std::vector<Assumption> out;
  auto absent = [](const json* o, const char* key) { return !o || !o->is_object() || !o->contains(key); };
  auto note = [&](const json* o, const std::string& section, const char* key, bool matters, const std::string& value) {
    if (matters && absent(o, key)) out.push_back({"/workload" + section + "/" + key, value});
  };
  auto yes_no = [](bool b) { return std::string(b ? "true" : "false"); };
  const json* m = wl.contains("model") ? &wl.at("model") : nullptr;
  const json* par = wl.contains("parallel") ? &wl.at("parallel") : nullptr;
  const json* fab = wl.contains("fabric") ? &wl.at("fabric") : nullptr;
  note(m, "/model", "kv_heads", true, std::to_string(w.model.heads));
  note(m, "/model", "ffn_hidden", true, std::to_string(4 * w.model.hidden));
  note(m, "/model", "gated_mlp", true, "false");
  note(&wl, "", "precision", true, "bf16");
  note(&wl, "", "attention", true, "flash");
  note(par, "/parallel", "micro_batch", true, std::to_string(l.micro_batch));
  note(par, "/parallel", "recompute", true, "none");
  note(par, "/parallel", "sequence_parallel", l.tp > 1, yes_no(l.sequence_parallel));
  note(par, "/parallel", "virtual_stages", l.pp > 1, std::to_string(l.virtual_stages));
  note(par, "/parallel", "schedule", l.pp > 1, to_string(l.schedule));
  note(fab, "/fabric", "host", l.activation_offload > 0, "50GB/s");
  const bool even_split = l.pp > 1 && absent(par, "stage_layers") && absent(par, "first_stage_layers") && absent(par, "last_stage_layers");
  note(par, "/parallel", "embedding_as_layer", even_split, yes_no(l.embedding_as_layer));
  note(par, "/parallel", "loss_as_layer", even_split, yes_no(l.loss_as_layer));
  note(par, "/parallel", "cp_algorithm", l.cp > 1, l.cp_algorithm == CpAlgorithm::Ring ? "ring" : "all_gather");
  const int split_dims = (l.cp > 1) + (l.dp > 1) + (l.pp > 1);
  note(par, "/parallel", "rank_order", split_dims > 1, rank_order_text(l.rank_order));
  note(par, "/parallel", "zero_stage", l.dp * l.cp > 1, std::to_string(l.zero_stage));
  note(&wl, "", "dp_algorithm", l.dp * l.cp > 1, "ring");
  const json* eff = wl.contains("efficiency") ? &wl.at("efficiency") : nullptr;
  if (absent(eff, "gemm") && absent(eff, "preset") && !spec.efficiency_preset.empty())  // chosen by GPU and precision
    out.push_back({"/workload/efficiency/preset", spec.efficiency_preset});
  note(fab, "/fabric", "nodes_per_leaf", true, std::to_string(spec.fabric.nodes_per_leaf));
  return out;
}

}  // namespace

void read_workload(Reader& r, const json& root, Scenario& s) {
  const json* wl = r.object(root, "", "workload", false);
  if (!wl) return;
  const std::string p = "/workload";
  r.allow_only(*wl, p, {"model", "parallel", "efficiency", "fabric", "dp_algorithm", "precision", "attention", "source", "notes"});
  WorkloadSpec spec;
  spec.gpu_model = s.cluster.gpu_model;
  Workload& w = spec.workload;
  w.gpu_peak_flops = s.cluster.gpu_peak_bf16_flops;
  // FP8 training (Transformer Engine): the layers' GEMMs at the FP8 peak, the rest in bf16.
  const bool fp8 = choose<bool>(r, *wl, p, "precision", false, {{"bf16", false}, {"fp8", true}}).value_or(false);
  w.attention = choose<AttentionKernel>(r, *wl, p, "attention", false, {{"flash", AttentionKernel::Flash}, {"full", AttentionKernel::Full}})
                    .value_or(AttentionKernel::Flash);
  if (fp8)
    w.gemm_peak_flops = s.cluster.gpu_peak_fp8_flops > 0 ? s.cluster.gpu_peak_fp8_flops : 2 * s.cluster.gpu_peak_bf16_flops;
  if (const json* m = r.object(*wl, p, "model", true)) {
    const std::string mp = p + "/model";
    r.allow_only(*m, mp, {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "gated_mlp", "vocab", "seq_len", "experts", "top_k", "source"});
    w.model.layers = count(r, *m, mp, "layers", true, 1);
    w.model.hidden = count(r, *m, mp, "hidden", true, 1);
    w.model.heads = count(r, *m, mp, "heads", true, 1);
    w.model.kv_heads = count(r, *m, mp, "kv_heads", false, 0);
    if (w.model.kv_heads > 0 && w.model.heads > 0 && w.model.heads % w.model.kv_heads != 0)
      r.problem(mp + "/kv_heads", "must divide heads (" + std::to_string(w.model.heads) + "): each key/value head serves a whole group of query heads");
    w.model.ffn_hidden = count(r, *m, mp, "ffn_hidden", false, 0);
    w.model.gated_mlp = r.boolean(*m, mp, "gated_mlp").value_or(false);
    w.model.vocab = count(r, *m, mp, "vocab", true, 1);
    w.model.seq_len = count(r, *m, mp, "seq_len", true, 1);
    w.model.experts = count(r, *m, mp, "experts", false, 1);
    w.model.top_k = count(r, *m, mp, "top_k", false, 1);
  }
  if (const json* l = r.object(*wl, p, "parallel", true)) {
    const std::string lp = p + "/parallel";
    r.allow_only(*l, lp, {"tp", "pp", "dp", "cp", "ep", "virtual_stages", "schedule", "contiguous_micro_batches", "zero_stage", "micro_batch",
                         "global_batch", "recompute", "activation_offload",
                         "stage_layers", "first_stage_layers", "last_stage_layers", "embedding_as_layer", "loss_as_layer",
                         "sequence_parallel", "cp_algorithm", "rank_order"});
    ParallelLayout& layout = w.layout;
    layout.tp = count(r, *l, lp, "tp", false, 1);
    layout.pp = count(r, *l, lp, "pp", false, 1);
    layout.cp = count(r, *l, lp, "cp", false, 1);
    layout.ep = count(r, *l, lp, "ep", false, 1);
    layout.virtual_stages = count(r, *l, lp, "virtual_stages", false, 1);
    // The pipeline's schedule (models/pipeline_schedule.hpp): Megatron's 1F1B, interleaved when
    // there are virtual stages, unless the scenario names another.
    layout.schedule = choose<PipelineSchedule>(r, *l, lp, "schedule", false,
                                               {{"1f1b", PipelineSchedule::OneFOneB},
                                                {"interleaved", PipelineSchedule::Interleaved},
                                                {"flexible_interleaved", PipelineSchedule::FlexibleInterleaved},
                                                {"zb_h1", PipelineSchedule::ZeroBubbleH1},
                                                {"zb_v", PipelineSchedule::ZeroBubbleV},
                                                {"dualpipe", PipelineSchedule::DualPipe}})
                          .value_or(layout.virtual_stages > 1 ? PipelineSchedule::Interleaved : PipelineSchedule::OneFOneB);
    layout.contiguous_micro_batches = count(r, *l, lp, "contiguous_micro_batches", false, 0);
    layout.zero_stage = static_cast<int>(r.integer(*l, lp, "zero_stage", false, 0, 3).value_or(1));
    layout.micro_batch = count(r, *l, lp, "micro_batch", false, 1);
    layout.global_batch = count(r, *l, lp, "global_batch", true, 1);
    const int gpus = s.job.nodes * s.cluster.gpus_per_node;
    const int model_parallel = layout.tp * layout.pp * layout.cp;
    layout.dp = count(r, *l, lp, "dp", false, model_parallel > 0 ? std::max(1, gpus / model_parallel) : 1);
    if (gpus > 0 && layout.tp * layout.pp * layout.cp * layout.dp != gpus)
      r.problem(lp, "tp x pp x cp x dp = " + std::to_string(layout.tp * layout.pp * layout.cp * layout.dp) +
                        " GPUs, but the job has " + std::to_string(gpus));
    layout.recompute = choose<Recompute>(r, *l, lp, "recompute", false,
                                         {{"none", Recompute::None}, {"selective", Recompute::Selective}, {"full", Recompute::Full}})
                           .value_or(Recompute::None);
    if (auto f = r.number(*l, lp, "activation_offload", false)) {
      if (*f < 0 || *f > 1) r.problem(lp + "/activation_offload", "must be a share between 0 and 1 (of a stage's saved activations)");
      else layout.activation_offload = *f;
    }
    read_stage_layers(r, *l, lp, w.model.layers, layout);
    layout.embedding_as_layer = r.boolean(*l, lp, "embedding_as_layer").value_or(false);
    layout.loss_as_layer = r.boolean(*l, lp, "loss_as_layer").value_or(false);
    if (!layout.stage_layers.empty() && (layout.embedding_as_layer || layout.loss_as_layer))
      r.problem(lp + "/stage_layers", "explicit stage sizes already place the embedding and the loss: drop embedding_as_layer / loss_as_layer");
    layout.sequence_parallel = r.boolean(*l, lp, "sequence_parallel").value_or(false);
    layout.cp_algorithm = choose<CpAlgorithm>(r, *l, lp, "cp_algorithm", false,
                                              {{"ring", CpAlgorithm::Ring}, {"all_gather", CpAlgorithm::AllGather}})
                              .value_or(CpAlgorithm::Ring);
    read_rank_order(r, *l, lp, layout);
  }
  read_efficiency(r, *wl, p, s.cluster.gpu_model, fp8, spec);
  // The fabric: from the cluster's topology when it has one, unless given here.
  CommFabricSpec& f = spec.fabric;
  f.gpus_per_node = s.cluster.gpus_per_node;
  if (s.cluster.topology) {
    f.nic_bytes_per_s = s.cluster.topology->nic_bytes_per_s * s.cluster.topology->nics_per_node / s.cluster.gpus_per_node;
    f.nvlink_bytes_per_s = s.cluster.topology->nvlink_bytes_per_s;
    f.oversubscription = s.cluster.topology->oversubscription;
  }
  if (const json* fb = r.object(*wl, p, "fabric", !s.cluster.topology)) {
    const std::string fp = p + "/fabric";
    r.allow_only(*fb, fp, {"nvlink", "nvlink_latency", "nic", "nic_latency", "host", "nodes_per_leaf", "oversubscription", "source"});
    w.host_bandwidth = r.positive_unit(*fb, fp, "host", false, parse_bandwidth_bytes_per_s, "50GB/s").value_or(w.host_bandwidth);
    f.nvlink_bytes_per_s = r.positive_unit(*fb, fp, "nvlink", false, parse_bandwidth_bytes_per_s, "300GB/s").value_or(f.nvlink_bytes_per_s);
    f.nic_bytes_per_s = r.positive_unit(*fb, fp, "nic", false, parse_bandwidth_bytes_per_s, "200Gbps").value_or(f.nic_bytes_per_s);
    f.nvlink_latency_s = micros_to_seconds(r.duration(*fb, fp, "nvlink_latency", false).value_or(1));
    f.nic_latency_s = micros_to_seconds(r.duration(*fb, fp, "nic_latency", false).value_or(5));
    f.nodes_per_leaf = static_cast<int>(r.integer(*fb, fp, "nodes_per_leaf", false, 0, 1'000'000).value_or(0));
    if (auto o = r.number(*fb, fp, "oversubscription", false)) {
      if (*o < 1) r.problem(fp + "/oversubscription", "must be at least 1 (downlink over uplink bandwidth)");
      else f.oversubscription = *o;
    }
  }
  spec.dp_algorithm = choose<AllReduceAlgorithm>(r, *wl, p, "dp_algorithm", false,
                                                 {{"ring", AllReduceAlgorithm::Ring},
                                                  {"tree", AllReduceAlgorithm::Tree},
                                                  {"hierarchical", AllReduceAlgorithm::Hierarchical}})
                         .value_or(AllReduceAlgorithm::Ring);
  if (r.problems.empty()) {
    if (const std::string why = check_layout(w, s.cluster.gpus_per_node); !why.empty()) r.problem(p + "/parallel", why);
    else if (const std::string full = check_memory(w, s.cluster.gpu_memory_bytes); !full.empty()) {
      const std::string fix = cheapest_fit(w, s.cluster.gpu_memory_bytes, s.cluster.gpus_per_node);
      r.problem(p + "/parallel", full + (fix.empty() ? "; no change of schedule, recomputation or micro-batch alone fits" : "; the cheapest change that fits: " + fix));
    }
  }
  // Shrinking drops whole elastic replicas: each must hold whole data-parallel replicas (and whole
  // expert-parallel groups), or the step model has no layout for the narrower job.
  if (r.problems.empty() && s.elastic.shrink) {
    const ParallelLayout& l = w.layout;
    const int model_parallel = l.tp * l.pp * l.cp;
    const int replica_gpus = s.elastic.replica_nodes * s.cluster.gpus_per_node;
    if (replica_gpus % model_parallel != 0 || (replica_gpus / model_parallel) % l.ep != 0)
      r.problem("/policies/elastic/replica_nodes", "with a workload, a replica must hold whole data-parallel replicas (tp x pp x cp = " +
                                                       std::to_string(model_parallel) + " GPUs) and whole expert groups (ep " +
                                                       std::to_string(l.ep) + ")");
    else check_memory_when_shrunk(r, w, s);
  }
  r.string(*wl, p, "source", false);
  if (r.problems.empty()) spec.assumed = assumptions(*wl, spec);
  s.workload = spec;
}

}  // namespace ctwin::json_reader
