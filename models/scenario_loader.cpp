#include "models/scenario_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "models/fault_catalog.hpp"
#include "models/json_document.hpp"
#include "models/json_reader.hpp"

namespace ctwin {

using nlohmann::json;

const char* to_string(Distribution d) {
  switch (d) {
    case Distribution::Exponential: return "exponential";
    case Distribution::Weibull: return "weibull";
    case Distribution::Lognormal: return "lognormal";
  }
  return "?";
}
const char* to_string(Effect e) {
  switch (e) {
    case Effect::Crash: return "crash";
    case Effect::Hang: return "hang";
    case Effect::Slow: return "slow";
    case Effect::Sdc: return "sdc";
    case Effect::Flap: return "flap";
    case Effect::None: return "none";
  }
  return "?";
}

const char* to_string(ClassGroup g) {
  switch (g) {
    case ClassGroup::Gpu: return "gpu";
    case ClassGroup::GpuMemory: return "gpu_memory";
    case ClassGroup::Network: return "network";
    case ClassGroup::Host: return "host";
    case ClassGroup::Software: return "software";
  }
  return "?";
}

std::optional<ClassGroup> class_group_named(std::string_view name) {
  for (int g = 0; g < kClassGroups; ++g)
    if (name == to_string(static_cast<ClassGroup>(g))) return static_cast<ClassGroup>(g);
  return std::nullopt;
}

std::optional<Effect> effect_named(std::string_view name) {
  for (Effect e : {Effect::Crash, Effect::Hang, Effect::Slow, Effect::Sdc, Effect::Flap, Effect::None})
    if (name == to_string(e)) return e;
  return std::nullopt;
}

std::vector<EventClass> event_classes(const std::vector<FaultClass>& faults) {
  std::vector<EventClass> classes;
  classes.reserve(faults.size());
  for (const auto& f : faults) classes.push_back({f.name, to_string(f.rate.component)});
  return classes;
}

const char* to_string(Comparison::Metric m) {
  switch (m) {
    case Comparison::Metric::Goodput: return "goodput";
    case Comparison::Metric::InterruptionsPerDay: return "interruptions_per_day";
    case Comparison::Metric::Interruptions: return "interruptions";
    case Comparison::Metric::LostHoursPerInterruption: return "lost_hours_per_interruption";
  }
  return "?";
}
const char* to_string(Comparison::Relation r) {
  switch (r) {
    case Comparison::Relation::About: return "about";
    case Comparison::Relation::AtMost: return "at_most";
    case Comparison::Relation::AtLeast: return "at_least";
  }
  return "?";
}

namespace {

using namespace json_reader;

void read_cluster(Reader& r, const json& root, Scenario& s) {
  const std::string p = "/cluster";
  const json* c = r.object(root, "", "cluster", true);
  if (!c) return;
  r.allow_only(*c, p, {"nodes", "gpus_per_node", "gpu", "spare_nodes", "storage", "topology", "notes"});
  s.cluster.nodes = static_cast<int>(r.integer(*c, p, "nodes", true, 1, 1'000'000).value_or(0));
  s.cluster.gpus_per_node = static_cast<int>(r.integer(*c, p, "gpus_per_node", true, 1, 64).value_or(8));
  s.cluster.spare_nodes = static_cast<int>(r.integer(*c, p, "spare_nodes", false, 0, 1'000'000).value_or(0));
  if (const json* g = r.object(*c, p, "gpu", true)) {
    const std::string gp = p + "/gpu";
    r.allow_only(*g, gp, {"model", "peak_bf16", "peak_fp8", "memory", "source"});
    s.cluster.gpu_model = r.string(*g, gp, "model", true).value_or("");
    s.cluster.gpu_peak_bf16_flops = r.positive_unit(*g, gp, "peak_bf16", true, parse_flops, "989TFLOP/s").value_or(0);
    s.cluster.gpu_peak_fp8_flops = r.positive_unit(*g, gp, "peak_fp8", false, parse_flops, "1979TFLOP/s").value_or(0);
    s.cluster.gpu_memory_bytes = r.positive_unit(*g, gp, "memory", false, parse_bytes, "80GiB").value_or(0);
    r.string(*g, gp, "source", false);
  }
  if (const json* st = r.object(*c, p, "storage", false)) {
    const std::string sp = p + "/storage";
    r.allow_only(*st, sp, {"servers", "write_bandwidth", "read_bandwidth", "network_bandwidth", "source"});
    auto& storage = s.cluster.storage;
    storage.servers = static_cast<int>(r.integer(*st, sp, "servers", true, 1, 100'000).value_or(1));
    storage.write_bytes_per_s =
        r.positive_unit(*st, sp, "write_bandwidth", true, parse_bandwidth_bytes_per_s, "20GB/s").value_or(0);
    storage.read_bytes_per_s =
        r.positive_unit(*st, sp, "read_bandwidth", true, parse_bandwidth_bytes_per_s, "40GB/s").value_or(0);
    storage.network_bytes_per_s =
        r.positive_unit(*st, sp, "network_bandwidth", true, parse_bandwidth_bytes_per_s, "400Gbps").value_or(0);
    r.string(*st, sp, "source", false);
  }
  if (const json* t = r.object(*c, p, "topology", false)) {
    const std::string tp = p + "/topology";
    r.allow_only(*t, tp,
                 {"shape", "nics_per_node", "nvswitches_per_node", "nodes_per_rack", "nodes_per_unit", "spines",
                  "oversubscription", "nic_bandwidth", "nvlink_bandwidth", "nvlink_domain", "source"});
    TopologySpec spec;
    spec.shape = choose<TopologyShape>(r, *t, tp, "shape", true,
                                       {{"rail_optimized", TopologyShape::RailOptimized}, {"tor_fat_tree", TopologyShape::TorFatTree}})
                     .value_or(TopologyShape::RailOptimized);
    spec.nodes = s.cluster.nodes;
    spec.gpus_per_node = s.cluster.gpus_per_node;
    spec.nics_per_node = static_cast<int>(r.integer(*t, tp, "nics_per_node", false, 1, 64).value_or(spec.nics_per_node));
    spec.nvswitches_per_node =
        static_cast<int>(r.integer(*t, tp, "nvswitches_per_node", false, 0, 64).value_or(spec.nvswitches_per_node));
    spec.nodes_per_rack = static_cast<int>(r.integer(*t, tp, "nodes_per_rack", true, 1, 1024).value_or(1));
    spec.nodes_per_unit = static_cast<int>(r.integer(*t, tp, "nodes_per_unit", false, 1, 100'000).value_or(spec.nodes_per_unit));
    spec.spines = static_cast<int>(r.integer(*t, tp, "spines", true, 1, 100'000).value_or(1));
    if (auto o = r.number(*t, tp, "oversubscription", false)) {
      if (*o < 1) r.problem(tp + "/oversubscription", "must be at least 1 (downlink over uplink bandwidth)");
      else spec.oversubscription = *o;
    }
    spec.nic_bytes_per_s = r.positive_unit(*t, tp, "nic_bandwidth", true, parse_bandwidth_bytes_per_s, "400Gbps").value_or(1);
    spec.nvlink_bytes_per_s =
        r.positive_unit(*t, tp, "nvlink_bandwidth", false, parse_bandwidth_bytes_per_s, "900GB/s").value_or(spec.nvlink_bytes_per_s);
    spec.storage_servers = s.cluster.storage.servers;
    if (const json* d = r.object(*t, tp, "nvlink_domain", false)) {
      const std::string dp = tp + "/nvlink_domain";
      r.allow_only(*d, dp, {"nodes", "switches", "source"});
      spec.nvlink_domain_nodes = static_cast<int>(r.integer(*d, dp, "nodes", true, 1, 1024).value_or(1));
      spec.nvswitches_per_domain = static_cast<int>(r.integer(*d, dp, "switches", false, 1, 1024).value_or(9));
      r.string(*d, dp, "source", false);
    }
    r.string(*t, tp, "source", false);
    s.cluster.topology = spec;
  }
  r.string(*c, p, "notes", false);
}

void read_job(Reader& r, const json& root, Scenario& s) {
  const std::string p = "/job";
  const json* j = r.object(root, "", "job", true);
  if (!j) return;
  r.allow_only(*j, p, {"nodes", "step_time", "tokens_per_step", "tokens_per_s", "steps", "tokens", "horizon", "dp_reduction", "notes"});
  auto nodes = r.integer(*j, p, "nodes", false, 1, 1'000'000);
  s.job.nodes = static_cast<int>(nodes.value_or(s.cluster.nodes - s.cluster.spare_nodes));
  if (s.cluster.nodes > 0 && s.job.nodes + s.cluster.spare_nodes > s.cluster.nodes)
    r.problem(nodes ? p + "/nodes" : std::string("/cluster/spare_nodes"),
              "job nodes (" + std::to_string(s.job.nodes) + ") plus spare nodes (" +
                  std::to_string(s.cluster.spare_nodes) + ") exceed the cluster's " +
                  std::to_string(s.cluster.nodes) + " nodes");
  if (s.job.nodes < 1 && !nodes && s.cluster.nodes > 0)
    r.problem("/cluster/spare_nodes", "leaves no node for the job");

  auto step = r.duration(*j, p, "step_time", false, true);
  auto tokens_per_step = r.number(*j, p, "tokens_per_step", false, 0.0);
  auto tokens_per_s = r.number(*j, p, "tokens_per_s", false, 0.0);
  if (step && tokens_per_s && tokens_per_step)
    r.problem(p + "/tokens_per_s", "give step_time or tokens_per_s with tokens_per_step, not both");
  if (!step && tokens_per_s && tokens_per_step) {
    if (*tokens_per_step / *tokens_per_s > kLongestSeconds) r.problem(p + "/tokens_per_s", "gives a step longer than any simulation");
    else step = seconds_to_micros(*tokens_per_step / *tokens_per_s);
  }
  if (step) s.job.step_us = *step;
  s.job.tokens_per_step = tokens_per_step;
  if (!tokens_per_s && tokens_per_step && step) tokens_per_s = *tokens_per_step / micros_to_seconds(*step);
  const bool from_workload = root.contains("workload") && !step && !tokens_per_s;  // sim/step_model computes it
  if (!step && !tokens_per_s && !from_workload) r.problem(p + "/step_time", "missing: give step_time, tokens_per_s, or a workload");

  auto steps = r.number(*j, p, "steps", false, 0.0);
  auto tokens = r.number(*j, p, "tokens", false, 0.0);
  auto horizon = r.duration(*j, p, "horizon", false, true);
  int given = (steps ? 1 : 0) + (tokens ? 1 : 0) + (horizon ? 1 : 0);
  if (given != 1 && !j->contains("steps") && !j->contains("tokens") && !j->contains("horizon"))
    r.problem(p + "/horizon", "missing: give the work as steps or tokens, or a wall-clock horizon");
  else if (given > 1)
    r.problem(p, "give exactly one of steps, tokens and horizon");
  if (horizon) s.job.horizon_us = horizon;
  if (steps) {
    if (!step && !from_workload) r.problem(p + "/steps", "work in steps needs step_time");
    else if (!step) s.job.work_us.reset();  // set with the step time the workload gives
    else if (*steps * micros_to_seconds(*step) > kLongestSeconds) r.problem(p + "/steps", "is more work than any simulation can hold");
    else s.job.work_us = seconds_to_micros(*steps * micros_to_seconds(*step));
    s.job.work_steps = steps;
  }
  if (tokens) {
    if (!tokens_per_s && from_workload) r.problem(p + "/tokens", "with a workload, give the work in steps");
    else if (!tokens_per_s) r.problem(p + "/tokens", "work in tokens needs tokens_per_s, or step_time with tokens_per_step");
    else if (*tokens / *tokens_per_s > kLongestSeconds) r.problem(p + "/tokens", "is more work than any simulation can hold");
    else s.job.work_us = seconds_to_micros(*tokens / *tokens_per_s);
  }
  if (s.job.work_us && *s.job.work_us <= 0) r.problem(p, "the work is shorter than a microsecond");
  if (const json* dp = r.object(*j, p, "dp_reduction", false)) {
    const std::string dp_p = p + "/dp_reduction";
    r.allow_only(*dp, dp_p, {"time", "exposed", "source"});
    s.job.traffic_us = r.duration(*dp, dp_p, "time", true).value_or(0);
    s.job.traffic_exposed_us = r.duration(*dp, dp_p, "exposed", true).value_or(0);
    if (s.job.traffic_exposed_us > s.job.traffic_us) r.problem(dp_p + "/exposed", "is more than the whole reduction");
    if (step && s.job.traffic_us > *step) r.problem(dp_p + "/time", "is longer than the step");
    r.string(*dp, dp_p, "source", false);
  }
  r.string(*j, p, "notes", false);
}

void read_checkpoint(Reader& r, const json& root, Scenario& s) {
  const std::string p = "/checkpoint";
  const json* c = r.object(root, "", "checkpoint", true);
  if (!c) return;
  auto& ck = s.checkpoint;
  r.allow_only(*c, p,
               {"size_per_gpu", "save_time", "persist_bandwidth", "restore_time", "mechanism", "snapshot_time",
                "persist_every", "memory_restore_time", "peer_replicas", "save_on_failure", "source", "notes"});
  ck.mechanism = choose<CheckpointMechanism>(r, *c, p, "mechanism", false,
                                             {{"sync", CheckpointMechanism::Sync}, {"flash", CheckpointMechanism::Flash}})
                     .value_or(CheckpointMechanism::Sync);
  const bool flash = ck.mechanism == CheckpointMechanism::Flash;
  if (flash) {
    ck.snapshot_us = r.duration(*c, p, "snapshot_time", true).value_or(0);
    ck.persist_every = static_cast<int>(r.integer(*c, p, "persist_every", false, 1, 1'000'000).value_or(1));
    ck.memory_restore_us = r.duration(*c, p, "memory_restore_time", true).value_or(0);
    if (const json* peers = r.object(*c, p, "peer_replicas", false)) {
      r.allow_only(*peers, p + "/peer_replicas", {"replication_time", "restore_time"});
      ck.peer_replicas = true;
      // With a checkpoint size the copies are priced over each node's link; without one they are given.
      const bool sized = c->contains("size_per_gpu");
      ck.replication_us = r.duration(*peers, p + "/peer_replicas", "replication_time", !sized);
      ck.peer_restore_us = r.duration(*peers, p + "/peer_replicas", "restore_time", !sized);
    }
  } else {
    for (const char* key : {"snapshot_time", "persist_every", "memory_restore_time", "peer_replicas"})
      if (c->contains(key)) r.problem(p + "/" + key, "only the \"flash\" mechanism takes this");
  }
  ck.save_on_failure = r.boolean(*c, p, "save_on_failure").value_or(false);
  ck.size_per_gpu_bytes = r.positive_unit(*c, p, "size_per_gpu", false, parse_bytes, "2.5GiB");
  if (ck.size_per_gpu_bytes && *ck.size_per_gpu_bytes > kLargestCheckpointPerGpu) {
    r.problem(p + "/size_per_gpu", "is more than a petabyte per GPU: no GPU's state is that large");
    ck.size_per_gpu_bytes.reset();
  }
  ck.save_us = r.duration(*c, p, "save_time", false);
  ck.restore_us = r.duration(*c, p, "restore_time", false);
  auto bandwidth = r.positive_unit(*c, p, "persist_bandwidth", false, parse_bandwidth_bytes_per_s, "400Gbps");
  bool has_size = c->contains("size_per_gpu"), has_save = c->contains("save_time");
  if (has_size == has_save) r.problem(p, "give exactly one of size_per_gpu (time computed) and save_time (time given)");
  if (has_size) {
    if (!c->contains("persist_bandwidth")) r.problem(p + "/persist_bandwidth", "missing: size_per_gpu needs each node's bandwidth to storage");
    if (!root.contains("cluster") || !root["cluster"].is_object() || !root["cluster"].contains("storage"))
      r.problem("/cluster/storage", "missing: size_per_gpu needs the storage system the checkpoint goes to");
  }
  if (has_save && !has_size && !c->contains("restore_time"))
    r.problem(p + "/restore_time", "missing: with save_time there is no size to compute the restore from");
  ck.persist_bytes_per_s = bandwidth.value_or(0);
  r.string(*c, p, "source", false);
  r.string(*c, p, "notes", false);
}

void read_spares(Reader& r, const json& sp, Scenario& s) {
  const std::string p = "/spares";
  r.allow_only(sp, p,
               {"repair_time", "triage", "repair", "repair_failure_probability", "rma_time", "hot", "lemons",
                "retirement", "misdiagnosis", "source"});
  RepairShop& shop = s.spares;
  shop.fixed_us = r.duration(sp, p, "repair_time", false, true).value_or(0);
  shop.triage_us = r.duration(sp, p, "triage", false).value_or(0);
  if (const json* rep = r.object(sp, p, "repair", false)) {
    const std::string rp = p + "/repair";
    r.allow_only(*rep, rp, {"distribution", "median", "sigma", "mean", "source"});
    const auto d = r.string(*rep, rp, "distribution", true);
    if (d && *d == "exponential") {
      shop.repair_mean_us = static_cast<double>(r.duration(*rep, rp, "mean", true, true).value_or(1));
      for (const char* key : {"median", "sigma"})
        if (rep->contains(key)) r.problem(rp + "/" + key, "an exponential repair takes only a mean");
    } else if (d && *d == "lognormal") {
      shop.repair_median_us = static_cast<double>(r.duration(*rep, rp, "median", true, true).value_or(1));
      shop.repair_sigma = r.number(*rep, rp, "sigma", true, 0.0).value_or(0.5);
      if (rep->contains("mean")) r.problem(rp + "/mean", "a lognormal repair takes a median and a sigma");
    } else if (d) {
      r.problem(rp + "/distribution", "unknown value \"" + *d + "\" (one of: lognormal, exponential)");
    }
    r.string(*rep, rp, "source", false);
  }
  if (sp.contains("repair_time") == sp.contains("repair"))
    r.problem(p, "give exactly one of repair_time (fixed) and repair (a distribution)");
  shop.failure_probability = r.probability(sp, p, "repair_failure_probability").value_or(0);
  shop.rma_us = r.duration(sp, p, "rma_time", shop.failure_probability > 0, true).value_or(0);
  if (const json* hot = r.object(sp, p, "hot", false)) {
    r.allow_only(*hot, p + "/hot", {"count", "swap_time"});
    shop.hot_count = static_cast<int>(r.integer(*hot, p + "/hot", "count", true, 0, 1'000'000).value_or(0));
    shop.hot_swap_us = r.duration(*hot, p + "/hot", "swap_time", true).value_or(0);
  }
  if (const json* lemons = r.object(sp, p, "lemons", false)) {
    r.allow_only(*lemons, p + "/lemons", {"fraction", "rate_multiplier", "cure_probability", "source"});
    shop.lemon_cure_probability = r.probability(*lemons, p + "/lemons", "cure_probability").value_or(0);
    shop.lemon_fraction = r.probability(*lemons, p + "/lemons", "fraction").value_or(0);
    if (!lemons->contains("fraction")) r.problem(p + "/lemons/fraction", "missing required number");
    shop.lemon_multiplier = r.number(*lemons, p + "/lemons", "rate_multiplier", true, 1.0).value_or(1);
    r.string(*lemons, p + "/lemons", "source", false);
  }
  if (const json* retire = r.object(sp, p, "retirement", false)) {
    r.allow_only(*retire, p + "/retirement", {"failures", "within"});
    shop.retire_after = static_cast<int>(r.integer(*retire, p + "/retirement", "failures", true, 1, 1000).value_or(0));
    shop.retire_within_us = r.duration(*retire, p + "/retirement", "within", true, true).value_or(0);
  }
  if (const json* mis = r.object(sp, p, "misdiagnosis", false)) {
    r.allow_only(*mis, p + "/misdiagnosis", {"probability", "recurrence", "source"});
    shop.misdiagnosis_probability = r.probability(*mis, p + "/misdiagnosis", "probability").value_or(0);
    if (!mis->contains("probability")) r.problem(p + "/misdiagnosis/probability", "missing required number");
    shop.recurrence_mean_us = r.duration(*mis, p + "/misdiagnosis", "recurrence", true, true).value_or(1);
    r.string(*mis, p + "/misdiagnosis", "source", false);
  }
  if (shop.hot_count > s.cluster.spare_nodes) r.problem(p + "/hot/count", "more hot spares than spare nodes");
  r.string(sp, p, "source", false);
}

//! The relaunch's cost, and the faster mechanisms with theirs: `mechanism` names the one in force.
//! A policy file (the live master's) may say the mechanism without the relaunch's cost.
void read_restart(Reader& r, const json& rs, Scenario& s, bool overhead_required = true) {
  const std::string p = "/restart";
  r.allow_only(rs, p, {"overhead", "mechanism", "in_process", "warm_standby", "source"});
  s.restart_overhead_us = r.duration(rs, p, "overhead", overhead_required).value_or(0);
  r.string(rs, p, "source", false);
  RestartMechanisms& m = s.restart;
  m.mechanism = choose<RestartMechanism>(r, rs, p, "mechanism", false,
                                         {{"relaunch", RestartMechanism::Relaunch},
                                          {"in_process", RestartMechanism::InProcess},
                                          {"warm_standby", RestartMechanism::WarmStandby}})
                    .value_or(RestartMechanism::Relaunch);
  if (const json* ip = r.object(rs, p, "in_process", m.mechanism == RestartMechanism::InProcess)) {
    const std::string q = p + "/in_process";
    r.allow_only(*ip, q, {"overhead", "faults", "source"});
    m.in_process_us = r.duration(*ip, q, "overhead", true).value_or(0);
    r.string(*ip, q, "source", false);
    if (auto it = ip->find("faults"); it != ip->end()) {
      if (!it->is_array()) r.problem(q + "/faults", std::string("expected an array of fault class names, got ") + it->type_name());
      else
        for (std::size_t i = 0; i < it->size(); ++i) {
          const json& name = (*it)[i];
          const std::string at = q + "/faults/" + std::to_string(i);
          if (!name.is_string()) r.problem(at, "expected a fault class name");
          else if (std::none_of(s.faults.begin(), s.faults.end(), [&](const FaultClass& f) { return f.name == name.get<std::string>(); }))
            r.problem(at, "no fault class is named \"" + name.get<std::string>() + "\"");
          else m.in_process_faults.push_back(name.get<std::string>());
        }
    }
  }
  if (const json* ws = r.object(rs, p, "warm_standby", m.mechanism == RestartMechanism::WarmStandby)) {
    const std::string q = p + "/warm_standby";
    r.allow_only(*ws, q, {"overhead", "source"});
    m.warm_standby_us = r.duration(*ws, q, "overhead", true).value_or(0);
    r.string(*ws, q, "source", false);
  }
}

void read_rest(Reader& r, const json& root, Scenario& s) {
  if (const json* rs = r.object(root, "", "restart", true)) read_restart(r, *rs, s);
  bool needs_spares = false;
  for (const auto& f : s.faults)
    needs_spares |= f.action == Act::Replace || (f.escalation && f.escalation->action == Act::Replace);
  if (const json* sp = r.object(root, "", "spares", needs_spares)) read_spares(r, *sp, s);
  if (auto it = root.find("compare"); it != root.end()) {
    if (!it->is_array()) r.problem("/compare", std::string("expected an array, got ") + it->type_name());
    else
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string cp = "/compare/" + std::to_string(i);
        const json& c = (*it)[i];
        if (!c.is_object()) {
          r.problem(cp, "expected an object");
          continue;
        }
        r.allow_only(c, cp, {"metric", "published", "relation", "source", "notes"});
        Comparison cmp;
        cmp.metric = choose<Comparison::Metric>(r, c, cp, "metric", true,
                                                {{"goodput", Comparison::Metric::Goodput},
                                                 {"interruptions_per_day", Comparison::Metric::InterruptionsPerDay},
                                                 {"interruptions", Comparison::Metric::Interruptions},
                                                 {"lost_hours_per_interruption", Comparison::Metric::LostHoursPerInterruption}})
                         .value_or(Comparison::Metric::Goodput);
        cmp.relation = choose<Comparison::Relation>(r, c, cp, "relation", false,
                                                    {{"about", Comparison::Relation::About},
                                                     {"at_most", Comparison::Relation::AtMost},
                                                     {"at_least", Comparison::Relation::AtLeast}})
                           .value_or(Comparison::Relation::About);
        cmp.published = r.number(c, cp, "published", true).value_or(0);
        cmp.source = r.string(c, cp, "source", true).value_or("");
        r.string(c, cp, "notes", false);
        s.compare.push_back(cmp);
      }
  }
  if (const json* m = r.object(root, "", "maintenance", false)) {
    r.allow_only(*m, "/maintenance", {"first", "interval", "duration", "source"});
    Maintenance mt;
    mt.interval_us = r.duration(*m, "/maintenance", "interval", true, true).value_or(1);
    mt.duration_us = r.duration(*m, "/maintenance", "duration", true).value_or(0);
    mt.first_us = r.duration(*m, "/maintenance", "first", false).value_or(mt.interval_us);
    r.string(*m, "/maintenance", "source", false);
    if (mt.duration_us >= mt.interval_us) r.problem("/maintenance/duration", "must be shorter than the interval");
    s.maintenance = mt;
  }
  if (const json* sim = r.object(root, "", "simulation", false)) {
    const std::string p = "/simulation";
    r.allow_only(*sim, p, {"trials", "seed", "max_wall", "unsaved_work_at_horizon", "part_ages", "faults_during_recovery"});
    s.faults_during_recovery = r.boolean(*sim, p, "faults_during_recovery").value_or(true);
    s.trials = static_cast<int>(r.integer(*sim, p, "trials", false, 1, kMaxTrials).value_or(s.trials));
    s.seed = static_cast<std::uint64_t>(r.integer(*sim, p, "seed", false, 0).value_or(static_cast<std::int64_t>(s.seed)));
    s.max_wall_us = r.duration(*sim, p, "max_wall", false, true).value_or(0);
    s.unsaved_work_at_horizon_counts =
        choose<bool>(r, *sim, p, "unsaved_work_at_horizon", false, {{"productive", true}, {"lost", false}}).value_or(true);
    s.parts_start_stationary = choose<bool>(r, *sim, p, "part_ages", false, {{"new", false}, {"stationary", true}}).value_or(false);
  }
  if (s.max_wall_us == 0) {
    // A run that is given its work stops at 100x its failure-free length (the trial is marked unfinished).
    if (s.job.horizon_us) s.max_wall_us = *s.job.horizon_us;
    else if (s.job.work_us) s.max_wall_us = *s.job.work_us > INT64_MAX / 200 ? INT64_MAX / 2 : *s.job.work_us * 100;
  }
}

}  // namespace

std::string content_hash(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

namespace {

json parse_root(const std::string& text, const std::string& display_name) {
  json root = parse_json_document(text, display_name);
  if (!root.is_object()) throw ScenarioInvalid(display_name, {{"", "expected a JSON object at the top level"}});
  return root;
}

void read_schema_version(Reader& r, const json& root) {
  if (auto version = r.integer(root, "", "schema_version", true, 1, 1'000)) {
    if (*version != kScenarioSchemaVersion)
      r.problem("/schema_version", "this build reads schema_version 1; version " + std::to_string(*version) +
                                       " comes from a newer ctwin");
  } else if (!root.contains("schema_version")) {
    r.problems.back().reason = "missing: add \"schema_version\": 1";
  }
}

}  // namespace

//! Refused before it is read when it is over the cap: a file of gigabytes took 31 s and 3.6 GB of
//! memory to be told it is too large. A pipe or FIFO is read up to the cap and one byte.
std::string read_capped_text(const std::string& path) {
  auto too_large = [&](std::uintmax_t bytes) {
    return ScenarioInvalid(path, {{"", "is " + std::to_string(bytes >> 20) + " MiB: a scenario is at most " +
                                           std::to_string(kLargestScenarioBytes >> 20) + " MiB"}});
  };
  std::error_code ec;
  if (const auto bytes = std::filesystem::file_size(path, ec); !ec && bytes > kLargestScenarioBytes) throw too_large(bytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioInvalid(path, {{"", "cannot open the file"}});
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kLargestScenarioBytes) throw too_large(text.size());
  }
  return text;
}

Scenario parse_scenario(const std::string& text, const std::string& display_name) {
  if (text.size() > kLargestScenarioBytes)
    throw ScenarioInvalid(display_name, {{"", "is " + std::to_string(text.size() >> 20) + " MiB: a scenario is at most " +
                                                  std::to_string(kLargestScenarioBytes >> 20) + " MiB"}});
  const json root = parse_root(text, display_name);
  Reader r;
  Scenario s;
  s.content_hash = content_hash(text);
  r.allow_only(root, "",
               {"$schema", "schema_version", "name", "description", "sources", "notes", "cluster", "job", "faults", "checkpoint",
                "restart", "spares", "maintenance", "policies", "simulation", "compare", "workload", "calibration"});
  read_schema_version(r, root);
  s.name = r.string(root, "", "name", true).value_or("");
  s.description = r.string(root, "", "description", false).value_or("");
  if (auto it = root.find("sources"); it != root.end() && !it->is_array() && !it->is_object())
    r.problem("/sources", "expected an array or object of citations");
  if (auto it = root.find("notes"); it != root.end() && !it->is_string() && !it->is_array())
    r.problem("/notes", "expected a string or an array of strings");

  read_cluster(r, root, s);
  read_job(r, root, s);
  read_faults(r, root, s);
  read_checkpoint(r, root, s);
  read_policies(r, root, s);
  read_workload(r, root, s);
  read_rest(r, root, s);
  if (auto it = root.find("calibration"); it != root.end() && it->is_object() && it->contains("window"))
    s.calibrated_window_us = r.duration(*it, "/calibration", "window", false);
  if (r.problems.empty()) check_fault_volume(r, s);

  if (!r.problems.empty()) throw ScenarioInvalid(display_name, std::move(r.problems));
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(read_capped_text(path), path); }

Scenario parse_policies_or_scenario(const std::string& text, const std::string& display_name) {
  const json root = parse_root(text, display_name);
  if (root.contains("cluster")) return parse_scenario(text, display_name);
  Reader r;
  Scenario s;
  s.content_hash = content_hash(text);
  r.allow_only(root, "", {"$schema", "schema_version", "name", "description", "sources", "notes", "policies", "restart"});
  read_schema_version(r, root);
  s.name = r.string(root, "", "name", false).value_or("policies");
  read_policies(r, root, s);
  // The live master's restart mechanism (in-process restart); its classes are the live ones, named in a scenario only.
  if (const json* rs = r.object(root, "", "restart", false)) read_restart(r, *rs, s, false);
  if (!r.problems.empty()) throw ScenarioInvalid(display_name, std::move(r.problems));
  return s;
}

Scenario load_policies_or_scenario(const std::string& path) { return parse_policies_or_scenario(read_capped_text(path), path); }

}  // namespace ctwin
