// An event log (the simulator's or the live controller's) as evidence: every fault of a class
// named in the base scenario, each node's time in the job, and the lifetimes of its parts.
#include <algorithm>
#include <set>

#include "calibration/scenario_update.hpp"
#include "models/network_domains.hpp"

#include "calibration/evidence.hpp"

namespace ctwin::calib {

namespace {

constexpr double kHour = 3600;

//! A fabric class (leaf, spine, cable, NVLink tray): its strikes over every part of it the
//! topology has, for the log's whole span (parts never leave the fabric the way nodes leave a job).
void add_network_class(Evidence& into, const FaultClass& fc, std::int64_t parts, const std::vector<double>& times, double end,
                       const std::string& file) {
  ClassEvidence& c = into.classes[fc.name];
  c.component = to_string(fc.rate.component);
  c.count += static_cast<double>(times.size());
  const double part_hours = static_cast<double>(parts) * end / kHour;
  c.exposure_hours += part_hours;
  add_trend_evidence(c, "run", times, {{0.0, end}});
  c.provenance.push_back(file + ": " + std::to_string(times.size()) + " strikes over " + std::to_string(parts) + " " + c.component +
                         (parts == 1 ? "" : "s") + " x " + number(end / kHour) + " h");
}

}  // namespace

void add_event_log(Evidence& into, const EventLog& log, const Scenario& base) {
  const int job_nodes = base.job.nodes;
  const int gpus = std::max(1, base.cluster.gpus_per_node);
  double end = 0;
  for (const LoggedEvent& e : log.events) end = std::max(end, e.time_s);
  // Each node's spells in the job: the first job nodes from the start, spares from their assignment.
  std::map<int, std::vector<std::pair<double, double>>> spells;
  std::map<int, double> since;
  for (int n = 0; n < job_nodes; ++n) since[n] = 0;
  // Faults by class and part (node, gpu), and the events that time repairs and recoveries. A
  // network class strikes the fabric's parts whether or not a job node sits behind them (a strike
  // on an unused part is `fault_ignored`): all of them count, over every part's time.
  std::map<std::string, std::map<std::pair<int, int>, std::vector<double>>> faults;
  std::map<std::string, std::vector<double>> network_faults;
  std::map<int, double> sent_to_repair;
  double interrupted = -1, last_interruption = 0;  // -1: the job is running
  std::map<std::string, int> unknown;  // class -> rows
  int first_line = 0, last_line = 0;
  bool job_log = false;                      // a job master's: its start row names the job
  double first_running = -1, ledger_restart = -1;
  std::map<std::string, std::string> restart_paths;  // by generation: the path its restart took
  for (const LoggedEvent& e : log.events) {
    if (e.kind == EventKind::Start) job_log = job_log || detail_field(e.detail, "job").has_value();
    if (e.kind == EventKind::Running && first_running < 0) first_running = e.time_s;
    if (e.kind == EventKind::RestartBegin)
      restart_paths[detail_field(e.detail, "generation").value_or(std::to_string(e.line))] = detail_field(e.detail, "path").value_or("relaunch");
    // The master's check once every node ran: a restart that took another path than planned (a
    // standby not ready, a kept trainer that did not rejoin) is counted as the path it took.
    if (e.kind == EventKind::Health && e.detail.rfind("launched ", 0) == 0)
      if (const auto g = detail_field(e.detail, "generation"); g && restart_paths.count(*g))
        restart_paths[*g] = detail_field(e.detail, "path").value_or(restart_paths[*g]);
    if (e.kind == EventKind::Ledger && e.detail.rfind("restart=", 0) == 0 &&
        (!finite_number(e.detail.substr(8), ledger_restart) || ledger_restart < 0))
      throw TraceUnreadable(log.report.file + ": line " + std::to_string(e.line) + ": the ledger's restart is not a non-negative number: \"" +
                            e.detail + "\"");
    if (e.kind == EventKind::Fault || e.kind == EventKind::FaultIgnored) {
      const std::string name(logged_class(e));
      const FaultClass* fc = nullptr;
      for (const FaultClass& f : base.faults)
        if (f.name == name) fc = &f;
      if (!fc) {
        ++unknown[name.empty() ? std::string("(none)") : name];
        continue;
      }
      if (is_network(fc->rate.component)) {
        network_faults[name].push_back(e.time_s);
        continue;
      }
      if (e.kind == EventKind::FaultIgnored) continue;  // a slot out waiting for a spare: no node's time in the job
      faults[name][{e.node, fc->rate.component == Component::Gpu ? std::max(0, e.gpu) : -1}].push_back(e.time_s);
      if (!first_line) first_line = e.line;
      last_line = e.line;
      auto& node = into.nodes["node-" + std::to_string(e.node)];
      node.node = "node-" + std::to_string(e.node);
      ++node.count;
    } else if (e.kind == EventKind::ToRepair || e.kind == EventKind::Evicted || e.kind == EventKind::Retired) {
      if (auto it = since.find(e.node); it != since.end()) {
        spells[e.node].emplace_back(it->second, e.time_s);
        since.erase(it);
      }
      if (e.kind == EventKind::ToRepair) sent_to_repair[e.node] = e.time_s;
    } else if (e.kind == EventKind::SpareAssigned) {
      since.try_emplace(e.node, e.time_s);
    } else if (e.kind == EventKind::NodeUp) {
      if (auto it = sent_to_repair.find(e.node); it != sent_to_repair.end()) {
        into.repair_hours.push_back((e.time_s - it->second) / kHour);
        sent_to_repair.erase(it);
      }
    } else if (e.kind == EventKind::Interrupted) {
      if (interrupted < 0) interrupted = e.time_s;
      into.job_lives.push_back({(e.time_s - last_interruption) / kHour, true});
      last_interruption = e.time_s;
    } else if (e.kind == EventKind::Running && interrupted >= 0) {
      into.recovery_hours.push_back((e.time_s - interrupted) / kHour);
      interrupted = -1;
    }
  }
  if (job_log && ledger_restart >= 0 && !restart_paths.empty()) {
    // The start-up (to the first `running` row) is no restart: validate takes it out too.
    const double seconds = ledger_restart - std::clamp(first_running, 0.0, ledger_restart);
    int restarts = 0;
    for (const auto& [generation, path] : restart_paths) ++into.restarts.by_path[path], ++restarts;
    into.restarts.seconds += seconds;
    into.restarts.provenance.push_back(log.report.file + ": " + std::to_string(restarts) + " restarts, " + number(seconds) +
                                       " s of the ledger's restart after the start-up");
  }
  for (const auto& [node, start] : since) spells[node].emplace_back(start, end);
  into.job_lives.push_back({(end - last_interruption) / kHour, false});
  double node_hours = 0;
  for (const auto& [node, list] : spells) {
    double hours = 0;
    for (const auto& [a, b] : list) hours += (b - a) / kHour;
    node_hours += hours;
    auto& count = into.nodes["node-" + std::to_string(node)];
    count.node = "node-" + std::to_string(node);
    count.exposure += hours;
  }
  std::vector<std::pair<double, double>> node_windows;
  for (const auto& [node, list] : spells) node_windows.insert(node_windows.end(), list.begin(), list.end());
  add_trend_evidence(into.fleet, "run", {}, node_windows);
  // Lifetimes: within each spell a part's life runs from the spell's start or its last fault to
  // its next fault (failed) or the spell's end (censored).
  for (const FaultClass& fc : base.faults) {
    if (is_network(fc.rate.component)) {
      add_network_class(into, fc, component_count(base, fc), network_faults[fc.name], end, log.report.file);
      continue;
    }
    ClassEvidence& c = into.classes[fc.name];
    c.component = to_string(fc.rate.component);
    c.xid = fc.xid.value_or(-1);
    const auto& by_part = faults[fc.name];
    const int parts = fc.rate.component == Component::Gpu ? gpus : 1;
    for (const auto& [node, list] : spells)
      for (int p = 0; p < parts; ++p) {
        const auto it = by_part.find({node, fc.rate.component == Component::Gpu ? p : -1});
        for (const auto& [a, b] : list) {
          double start = a;
          if (it != by_part.end())
            for (double t : it->second)
              if (t >= a && t <= b) {
                c.lives.push_back({(t - start) / kHour, true});
                start = t;
                c.count += 1;
              }
          c.lives.push_back({(b - start) / kHour, false});
        }
      }
    c.exposure_hours += node_hours * parts;
    std::vector<double> times;
    for (const auto& [part, list] : by_part) times.insert(times.end(), list.begin(), list.end());
    add_trend_evidence(c, "run", times, node_windows);
    add_trend_evidence(into.fleet, "run", times, {});
    c.provenance.push_back(log.report.file + ": " + std::to_string(static_cast<long long>(c.count)) + " faults over " +
                           std::to_string(static_cast<long long>(node_hours)) + " node-hours" +
                           (first_line ? " (lines " + std::to_string(first_line) + "-" + std::to_string(last_line) + ")" : ""));
  }
  nlohmann::ordered_json j = report_json(log.report);
  // A node's own live log (its start row names a host, not a job's width) counts every stop of
  // its trainer, a peer's fault that failed its collective included: over several nodes' logs one
  // interruption is several faults. The job master's log blames one.
  for (const LoggedEvent& e : log.events)
    if (e.kind == EventKind::Start && !detail_field(e.detail, "nodes")) {
      j["warning"] = "one node's live log: its faults include its trainer's stops caused by another node's fault (a failed collective), so "
                     "several nodes' logs count one interruption several times; calibrate the job master's log (ctwin-live master --events), "
                     "which blames one node";
      break;
    }
  j["span_hours"] = end / kHour;
  j["node_hours"] = node_hours;
  // What was left out, and why: a row whose class the base lacks has no component or exposure.
  nlohmann::ordered_json skipped = nlohmann::ordered_json::array();
  for (const auto& [name, rows] : unknown)
    skipped.push_back({{"class", name}, {"rows", rows},
                       {"why", name == "(none)" ? "the fault row names no class" : "not a class of the base scenario: no component or exposure to count it over"}});
  if (!skipped.empty()) j["classes_skipped"] = skipped;
  into.traces.push_back(j);
}

}  // namespace ctwin::calib
