// The scenario's optional `workload` section (docs/scenario.md): model shape, parallel layout,
// efficiencies and the fabric. With it, the step time is an output (sim/step_model.hpp).
#include <string>

#include "models/json_reader.hpp"

namespace ctwin::json_reader {

namespace {

int count(Reader& r, const json& o, const std::string& p, const char* key, bool required, int fallback, int max = 100'000'000) {
  return static_cast<int>(r.integer(o, p, key, required, 1, max).value_or(fallback));
}

double share(Reader& r, const json& o, const std::string& p, const char* key, double fallback) {
  return r.probability(o, p, key).value_or(fallback);
}

}  // namespace

void read_workload(Reader& r, const json& root, Scenario& s) {
  const json* wl = r.object(root, "", "workload", false);
  if (!wl) return;
  const std::string p = "/workload";
  r.allow_only(*wl, p, {"model", "parallel", "efficiency", "fabric", "dp_algorithm", "source", "notes"});
  WorkloadSpec spec;
  Workload& w = spec.workload;
  w.gpu_peak_flops = s.cluster.gpu_peak_bf16_flops;
  if (const json* m = r.object(*wl, p, "model", true)) {
    const std::string mp = p + "/model";
    r.allow_only(*m, mp, {"layers", "hidden", "heads", "ffn_hidden", "gated_mlp", "vocab", "seq_len", "experts", "top_k", "source"});
    w.model.layers = count(r, *m, mp, "layers", true, 1);
    w.model.hidden = count(r, *m, mp, "hidden", true, 1);
    w.model.heads = count(r, *m, mp, "heads", true, 1);
    w.model.ffn_hidden = count(r, *m, mp, "ffn_hidden", false, 0);
    w.model.gated_mlp = r.boolean(*m, mp, "gated_mlp").value_or(false);
    w.model.vocab = count(r, *m, mp, "vocab", true, 1);
    w.model.seq_len = count(r, *m, mp, "seq_len", true, 1);
    w.model.experts = count(r, *m, mp, "experts", false, 1);
    w.model.top_k = count(r, *m, mp, "top_k", false, 1);
  }
  if (const json* l = r.object(*wl, p, "parallel", true)) {
    const std::string lp = p + "/parallel";
    r.allow_only(*l, lp, {"tp", "pp", "dp", "cp", "ep", "virtual_stages", "zero_stage", "micro_batch", "global_batch", "recompute"});
    ParallelLayout& layout = w.layout;
    layout.tp = count(r, *l, lp, "tp", false, 1);
    layout.pp = count(r, *l, lp, "pp", false, 1);
    layout.cp = count(r, *l, lp, "cp", false, 1);
    layout.ep = count(r, *l, lp, "ep", false, 1);
    layout.virtual_stages = count(r, *l, lp, "virtual_stages", false, 1);
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
  }
  if (const json* e = r.object(*wl, p, "efficiency", true)) {
    const std::string ep = p + "/efficiency";
    r.allow_only(*e, ep, {"gemm", "tp_overlap", "dp_overlap", "ep_overlap", "cp_overlap", "grad_bytes", "bandwidth", "source"});
    w.efficiency.gemm = r.probability(*e, ep, "gemm").value_or(0.5);
    if (!e->contains("gemm")) r.problem(ep + "/gemm", "missing: the achieved share of peak FLOP/s in the layers' kernels");
    w.efficiency.tp_overlap = share(r, *e, ep, "tp_overlap", 0);
    w.efficiency.dp_overlap = share(r, *e, ep, "dp_overlap", 0);
    w.efficiency.ep_overlap = share(r, *e, ep, "ep_overlap", 0);
    w.efficiency.cp_overlap = share(r, *e, ep, "cp_overlap", 0);
    w.efficiency.grad_bytes = r.number(*e, ep, "grad_bytes", false, 0.0).value_or(2);
    w.efficiency.bandwidth = r.number(*e, ep, "bandwidth", false, 0.0).value_or(1);
    if (w.efficiency.bandwidth > 1) r.problem(ep + "/bandwidth", "is a share of the simulated bandwidth: at most 1");
  }
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
    r.allow_only(*fb, fp, {"nvlink", "nvlink_latency", "nic", "nic_latency", "nodes_per_leaf", "oversubscription", "source"});
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
  if (r.problems.empty())
    if (const std::string why = check_layout(w, s.cluster.gpus_per_node); !why.empty()) r.problem(p + "/parallel", why);
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
  }
  r.string(*wl, p, "source", false);
  s.workload = spec;
}

}  // namespace ctwin::json_reader
