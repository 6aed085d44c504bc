// Fleet records as evidence: Xid lines from kernel logs, Slurm job records and incident tables.
#include <algorithm>
#include <map>

#include "calibration/evidence.hpp"
#include "models/xid_table.hpp"

namespace ctwin::calib {

namespace {
constexpr double kHour = 3600;
}

void add_trend_evidence(ClassEvidence& c, const std::string& clock, const std::vector<double>& times,
                        const std::vector<std::pair<double, double>>& windows) {
  if (!c.clock.empty() && c.clock != clock) c.clocks_mixed = true;
  c.clock = clock;
  c.fault_times.insert(c.fault_times.end(), times.begin(), times.end());
  c.windows.insert(c.windows.end(), windows.begin(), windows.end());
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

void add_xid_logs(Evidence& into, const std::vector<XidLog>& logs, const std::vector<std::size_t>& trace_slots, const Scenario* base,
                  const CalibrateOptions& options) {
  const int gpus = base ? std::max(1, base->cluster.gpus_per_node) : options.gpus_per_node;
  // Class of an Xid: the base's first class holding it (its own xid, or a category's covers: the
  // live side's rule, policies/fault_classes), else the catalogue's, else xid_<code>.
  auto class_of = [&](int xid) -> std::string {
    if (base)
      for (const FaultClass& f : base->faults)
        if (f.holds_xid(xid) && !is_network(f.rate.component)) return f.name;
    return xid_class_name(xid);
  };
  // Every host's window over all the logs: the fleet's exposure. A clean node is exposure too.
  std::map<std::string, std::pair<double, double>> window;
  for (const XidLog& log : logs)
    for (const auto& [host, w] : log.window) {
      auto [it, added] = window.try_emplace(host, w);
      it->second = {std::min(it->second.first, w.first), std::max(it->second.second, w.second)};
    }
  struct Seen {
    const XidEvent* event;
    std::size_t log;
  };
  // An Xid that accompanies another (a row remap after a double-bit error) reported on the same
  // GPU within the dedupe window is part of that fault; so is a repeat of the same Xid (a burst).
  std::map<std::pair<std::string, std::string>, std::vector<Seen>> on_gpu;
  for (std::size_t l = 0; l < logs.size(); ++l)
    for (const XidEvent& e : logs[l].events) on_gpu[{e.host, e.pci}].push_back({&e, l});
  std::vector<int> repeats(logs.size(), 0);
  // class -> GPU -> fault times; class -> log -> (first line, last line, faults)
  std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<double>>> faults;
  std::map<std::string, std::map<std::size_t, std::tuple<int, int, int>>> lines;
  std::map<std::string, int> xid_of;
  for (auto& [gpu, list] : on_gpu) {
    std::stable_sort(list.begin(), list.end(), [](const Seen& a, const Seen& b) { return a.event->time_s < b.event->time_s; });
    std::map<int, double> last_of_xid;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const XidEvent& e = *list[i].event;
      const XidInfo* x = xid_info(e.xid);
      bool merged = false;
      if (x && x->follows > 0)
        for (std::size_t j = i; j > 0 && e.time_s - list[j - 1].event->time_s < options.dedupe_s; --j)
          merged |= list[j - 1].event->xid == x->follows;
      const auto last = last_of_xid.find(e.xid);
      const bool repeat = last != last_of_xid.end() && e.time_s - last->second < options.dedupe_s;
      merged |= repeat;
      if (!repeat && e.xid == 63) into.row_remaps.remapped += 1;  // a remap, whether or not it follows its 48
      if (!repeat && e.xid == 64) into.row_remaps.failed += 1;
      last_of_xid[e.xid] = e.time_s;
      if (merged) {
        ++repeats[list[i].log];
        continue;
      }
      const std::string name = class_of(e.xid);
      xid_of[name] = e.xid;
      faults[name][gpu].push_back(e.time_s);
      auto [it, added] = lines[name].try_emplace(list[i].log, e.line, e.line, 0);
      std::get<0>(it->second) = std::min(std::get<0>(it->second), e.line);
      std::get<1>(it->second) = std::max(std::get<1>(it->second), e.line);
      ++std::get<2>(it->second);
      auto& node = into.nodes[e.host];
      node.node = e.host;
      ++node.count;
    }
  }
  double gpu_hours = 0;
  for (const auto& [host, w] : window) {
    const double hours = (w.second - w.first) / kHour;
    gpu_hours += hours * gpus;
    auto& node = into.nodes[host];
    node.node = host;
    node.exposure += hours;
  }
  std::vector<std::pair<double, double>> host_windows;
  for (const auto& [host, w] : window) host_windows.push_back(w);
  add_trend_evidence(into.fleet, "utc", {}, host_windows);
  for (const auto& [name, by_gpu] : faults) {
    ClassEvidence& c = into.classes[name];
    c.component = "gpu";
    c.xid = xid_of[name];
    if (const XidInfo* x = xid_info(c.xid); x && c.effect.empty()) c.effect = to_string(x->effect);
    // Lives for the shape: each GPU from the logs' start, a moment in its life (its age unknown),
    // to its first fault, or to the end. A GPU that fails again is counted, not taken for a new
    // part's short life: its repair is unknown.
    std::map<std::string, int> faulted_gpus;
    double count = 0;
    for (const auto& [gpu, times] : by_gpu) {
      const auto& w = window.at(gpu.first);
      c.lives.push_back({(times.front() - w.first) / kHour, true, true});
      count += static_cast<double>(times.size());
      ++faulted_gpus[gpu.first];
    }
    for (const auto& [host, w] : window)
      for (int g = faulted_gpus[host]; g < gpus; ++g) c.lives.push_back({(w.second - w.first) / kHour, false, true});
    c.count += count;
    c.exposure_hours += gpu_hours;
    std::vector<double> times;
    for (const auto& [gpu, list] : by_gpu) times.insert(times.end(), list.begin(), list.end());
    add_trend_evidence(c, "utc", times, host_windows);
    add_trend_evidence(into.fleet, "utc", times, {});
    for (const auto& [log, range] : lines[name])
      c.provenance.push_back(logs[log].report.file + ": " + std::to_string(std::get<2>(range)) + " Xid faults (lines " +
                             std::to_string(std::get<0>(range)) + "-" + std::to_string(std::get<1>(range)) + ")");
    c.provenance.push_back("exposure: " + std::to_string(logs.size()) + " kernel log(s), " + std::to_string(window.size()) + " host(s), " +
                           std::to_string(static_cast<long long>(gpu_hours)) + " GPU-hours");
  }
  // Classes of the base that an Xid counts as, never seen: zero faults over this exposure. (A class
  // no Xid counts as, a thermal trip say, is not seen by kernel logs at all: no exposure.)
  if (base)
    for (const FaultClass& f : base->faults)
      if (f.holds_any_xid() && f.rate.component == Component::Gpu && !faults.count(f.name)) {
        ClassEvidence& c = into.classes[f.name];
        const int code = f.covers && f.covers->xids ? f.covers->xids->front() : *f.xid;
        c.xid = f.xid.value_or(code);
        c.exposure_hours += gpu_hours;
        c.provenance.push_back("no Xid " + std::to_string(code) + (f.covers && f.covers->xids && f.covers->xids->size() > 1 ? " (nor any it covers)" : "") +
                               " in " + std::to_string(logs.size()) + " kernel log(s) over " + std::to_string(static_cast<long long>(gpu_hours)) +
                               " GPU-hours");
      }
  if (into.row_remaps.remapped + into.row_remaps.failed > 0)
    into.row_remaps.provenance.push_back(std::to_string(logs.size()) + " kernel log(s): " +
                                         std::to_string(static_cast<long long>(into.row_remaps.remapped)) + " row remaps (Xid 63), " +
                                         std::to_string(static_cast<long long>(into.row_remaps.failed)) + " failed (Xid 64)");
  for (std::size_t l = 0; l < logs.size(); ++l) {
    double log_gpu_hours = 0;
    for (const auto& [host, w] : logs[l].window) log_gpu_hours += (w.second - w.first) / kHour * gpus;
    nlohmann::ordered_json j = report_json(logs[l].report);
    j["hosts"] = logs[l].window.size();
    j["gpu_hours"] = log_gpu_hours;
    j["xid_lines"] = logs[l].events.size();
    j["repeats_merged"] = repeats[l];
    into.traces[trace_slots[l]] = j;
  }
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
