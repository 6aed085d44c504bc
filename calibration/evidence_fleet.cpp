// Fleet records as evidence: Xid lines from kernel logs, Slurm job records and incident tables.
#include <algorithm>
#include <map>

#include "calibration/evidence.hpp"
#include "models/xid_table.hpp"

namespace ctwin::calib {

namespace {
constexpr double kHour = 3600;
}

nlohmann::ordered_json report_json(const ReadReport& r) {
  nlohmann::ordered_json j{{"file", r.file}, {"kind", r.kind}, {"lines", r.lines}, {"records", r.parsed},
                           {"skipped", r.skipped}, {"malformed", r.malformed.size()}};
  nlohmann::ordered_json first = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(r.malformed.size(), 20); ++i)
    first.push_back({{"line", r.malformed[i].line}, {"reason", r.malformed[i].reason}});
  if (!r.malformed.empty()) j["malformed_lines"] = first;
  return j;
}

void add_xid_log(Evidence& into, const XidLog& log, const Scenario* base, const CalibrateOptions& options) {
  const int gpus = base ? std::max(1, base->cluster.gpus_per_node) : options.gpus_per_node;
  // Class of an Xid: the base's class naming it, else the catalogue's (the Xid table names it),
  // else xid_<code>.
  auto class_of = [&](int xid) -> std::string {
    if (base)
      for (const FaultClass& f : base->faults)
        if (f.xid == xid && !is_network(f.rate.component)) return f.name;
    if (const XidInfo* x = xid_info(xid); x && x->catalog_class) return x->catalog_class;
    return "xid_" + std::to_string(xid);
  };
  // An Xid that accompanies another (a row remap after a double-bit error) reported on the same
  // GPU within the dedupe window is part of that fault.
  std::map<std::pair<std::string, std::string>, std::vector<const XidEvent*>> on_gpu;
  for (const XidEvent& e : log.events) on_gpu[{e.host, e.pci}].push_back(&e);
  std::vector<const XidEvent*> kept;
  int repeats = 0;
  for (auto& [gpu, list] : on_gpu) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->time_s < b->time_s; });
    for (std::size_t i = 0; i < list.size(); ++i) {
      const XidInfo* x = xid_info(list[i]->xid);
      bool accompanies = false;
      if (x && x->follows > 0)
        for (std::size_t j = i; j > 0 && list[i]->time_s - list[j - 1]->time_s < options.dedupe_s; --j)
          accompanies |= list[j - 1]->xid == x->follows;
      if (accompanies) ++repeats;
      else kept.push_back(list[i]);
    }
  }
  // One fault per burst: the driver repeats an Xid for a while on the same GPU.
  std::map<std::tuple<std::string, std::string, int>, std::vector<const XidEvent*>> by_gpu;
  for (const XidEvent* e : kept) by_gpu[{e->host, e->pci, e->xid}].push_back(e);
  std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<double>>> faults;  // class -> gpu -> times
  std::map<std::string, std::pair<int, int>> lines;
  std::map<std::string, int> xid_of;
  for (auto& [key, list] : by_gpu) {
    std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->time_s < b->time_s; });
    double last = -1e300;
    for (const XidEvent* e : list) {
      if (e->time_s - last < options.dedupe_s) {
        ++repeats;
        last = e->time_s;
        continue;
      }
      last = e->time_s;
      const std::string name = class_of(e->xid);
      xid_of[name] = e->xid;
      faults[name][{e->host, e->pci}].push_back(e->time_s);
      auto [it, added] = lines.try_emplace(name, e->line, e->line);
      it->second.first = std::min(it->second.first, e->line);
      it->second.second = std::max(it->second.second, e->line);
      auto& node = into.nodes[e->host];
      node.node = e->host;
      ++node.count;
    }
  }
  double gpu_hours = 0;
  for (const auto& [host, window] : log.window) {
    const double hours = (window.second - window.first) / kHour;
    gpu_hours += hours * gpus;
    auto& node = into.nodes[host];
    node.node = host;
    node.exposure += hours;
  }
  for (const auto& [name, by_part] : faults) {
    ClassEvidence& c = into.classes[name];
    c.component = "gpu";
    c.xid = xid_of[name];
    if (const XidInfo* x = xid_info(c.xid); x && c.effect.empty()) c.effect = to_string(x->effect);
    double count = 0;
    std::map<std::string, int> faulted_gpus;
    for (const auto& [gpu, times] : by_part) {
      const auto& window = log.window.at(gpu.first);
      double start = window.first;
      for (double t : times) {
        c.lives.push_back({(t - start) / kHour, true});
        start = t;
      }
      c.lives.push_back({(window.second - start) / kHour, false});
      count += static_cast<double>(times.size());
      ++faulted_gpus[gpu.first];
    }
    // The GPUs that never showed this Xid lived the whole window.
    for (const auto& [host, window] : log.window)
      for (int g = faulted_gpus[host]; g < gpus; ++g) c.lives.push_back({(window.second - window.first) / kHour, false});
    c.count += count;
    c.exposure_hours += gpu_hours;
    c.provenance.push_back(log.report.file + ": " + std::to_string(static_cast<long long>(count)) + " Xid faults (lines " +
                           std::to_string(lines[name].first) + "-" + std::to_string(lines[name].second) + ") over " +
                           std::to_string(static_cast<long long>(gpu_hours)) + " GPU-hours");
  }
  // Classes the base names with an Xid that never appeared: zero faults over this exposure.
  if (base)
    for (const FaultClass& f : base->faults)
      if (f.xid && f.rate.component == Component::Gpu && !faults.count(f.name)) {
        ClassEvidence& c = into.classes[f.name];
        c.xid = *f.xid;
        c.exposure_hours += gpu_hours;
        c.provenance.push_back(log.report.file + ": no Xid " + std::to_string(*f.xid) + " over " +
                               std::to_string(static_cast<long long>(gpu_hours)) + " GPU-hours");
      }
  nlohmann::ordered_json j = report_json(log.report);
  j["hosts"] = log.window.size();
  j["gpu_hours"] = gpu_hours;
  j["xid_lines"] = log.events.size();
  j["repeats_merged"] = repeats;
  into.traces.push_back(j);
}

void add_sacct(Evidence& into, const SlurmLog& log) {
  std::map<std::string, int> states;
  double node_hours = 0, node_fails = 0;
  for (const SlurmJob& job : log.jobs) {
    ++states[job.state];
    node_hours += job.nodes * (job.end_s - job.start_s) / kHour;
    if (job.state == "NODE_FAIL") ++node_fails;
    into.jobs.push_back(job);
  }
  ClassEvidence& c = into.classes["slurm_node_fail"];
  c.component = "node";
  c.count += node_fails;
  c.exposure_hours += node_hours;
  c.provenance.push_back(log.report.file + ": " + std::to_string(static_cast<long long>(node_fails)) + " NODE_FAIL jobs over " +
                         std::to_string(static_cast<long long>(node_hours)) + " node-hours");
  nlohmann::ordered_json j = report_json(log.report);
  j["jobs"] = log.jobs.size();
  j["states"] = states;
  j["node_hours"] = node_hours;
  into.traces.push_back(j);
}

void add_incidents(Evidence& into, const IncidentTable& table) {
  for (const IncidentRow& row : table.rows) {
    ClassEvidence& c = into.classes[row.category];
    c.component = row.component;
    c.count += row.count;
    c.exposure_hours += row.exposure_hours;
    if (!row.effect.empty()) c.effect = row.effect;
    c.provenance.push_back(table.report.file + " line " + std::to_string(row.line) + ": " + std::to_string(row.count) + " over " +
                           std::to_string(row.exposure_hours) + " " + row.component + "-hours" +
                           (row.source.empty() ? "" : " (" + row.source + ")"));
  }
  into.traces.push_back(report_json(table.report));
}

}  // namespace ctwin::calib
