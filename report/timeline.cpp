#include "report/timeline.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/units.hpp"

namespace ctwin {

namespace {

using ordered_json = nlohmann::ordered_json;

//! One event as the drawing needs it, whichever source it came from.
struct Row {
  Micros time = 0;
  EventKind kind = EventKind::Fault;
  int node = -1;
  std::string label;   //!< a fault's class
  ordered_json args;   //!< shown when the event is clicked
};

std::string draw(const std::string& title, const std::vector<Row>& rows, Micros save_us) {
  enum Track { kJob = 1, kCheckpoints = 2, kFaults = 3, kFirstNode = 100 };
  ordered_json trace = ordered_json::array();
  auto name_track = [&](int tid, const std::string& name) {
    trace.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
    trace.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  };
  trace.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", title}}}});
  name_track(kJob, "job phase");
  name_track(kCheckpoints, "checkpoint saves");
  name_track(kFaults, "faults");
  std::set<int> named_nodes;
  auto node_track = [&](int node) {
    if (named_nodes.insert(node).second) name_track(kFirstNode + node, "node-" + std::to_string(node));
    return kFirstNode + node;
  };
  auto span = [&](int tid, const std::string& name, Micros start, Micros end) {
    if (end > start) trace.push_back({{"name", name}, {"ph", "X"}, {"pid", 1}, {"tid", tid}, {"ts", start}, {"dur", end - start}});
  };
  auto instant = [&](int tid, const std::string& name, Micros at, ordered_json args) {
    trace.push_back({{"name", name}, {"ph", "i"}, {"s", "t"}, {"pid", 1}, {"tid", tid}, {"ts", at}, {"args", std::move(args)}});
  };
  std::string phase = "running";
  Micros phase_start = 0;
  auto switch_phase = [&](const std::string& next, Micros at) {
    span(kJob, phase, phase_start, at);
    phase = next;
    phase_start = at;
  };
  std::map<int, Micros> slow_since;
  for (const Row& e : rows) {
    switch (e.kind) {
      case EventKind::Fault:
        if (e.node >= 0) instant(node_track(e.node), e.label, e.time, e.args);
        instant(kFaults, e.label, e.time, e.args);
        break;
      case EventKind::Interrupted: switch_phase("detection", e.time); break;
      case EventKind::Detected: switch_phase("diagnosis", e.time); break;
      case EventKind::WaitingForSpare: switch_phase("waiting for spares", e.time); break;
      case EventKind::RestartBegin: switch_phase("restart", e.time); break;
      case EventKind::RestoreBegin: switch_phase("restore", e.time); break;
      case EventKind::Running: switch_phase("running", e.time); break;
      case EventKind::CheckpointDone:
        if (save_us > 0) span(kCheckpoints, "save", e.time - save_us, e.time);
        else instant(kCheckpoints, "checkpoint", e.time, e.args);
        break;
      case EventKind::SlowBegin: slow_since[e.node] = e.time; break;
      case EventKind::SlowEnd:
        if (auto it = slow_since.find(e.node); it != slow_since.end()) {
          span(node_track(e.node), "slow", it->second, e.time);
          slow_since.erase(it);
        }
        break;
      case EventKind::ToRepair:
      case EventKind::SpareAssigned:
      case EventKind::NodeDown:
      case EventKind::NodeUp:
      case EventKind::Evicted:
        if (e.node >= 0) instant(node_track(e.node), to_string(e.kind), e.time, e.args);
        break;
      case EventKind::End: switch_phase("end", e.time); break;
      default: break;
    }
  }
  ordered_json doc{{"displayTimeUnit", "ms"}, {"traceEvents", std::move(trace)}};
  return doc.dump() + "\n";
}

}  // namespace

std::string timeline_json(const Scenario& scenario, const TrialConfig& config, const std::vector<RunEvent>& events, int trial) {
  std::vector<Row> rows;
  rows.reserve(events.size());
  for (const auto& e : events) {
    Row row{e.time, e.kind, e.node, "", ordered_json::object()};
    if (e.kind == EventKind::Fault) {
      const FaultClass& fc = scenario.faults[static_cast<std::size_t>(e.fault_class)];
      row.label = fc.name;
      row.args = {{"class", fc.name}, {"effect", to_string(fc.effect)}, {"action", to_string(fc.action)}};
      if (e.node >= 0) row.args["node"] = e.node;
      if (e.gpu >= 0) row.args["gpu"] = e.gpu;
      if (fc.xid) row.args["xid"] = *fc.xid;
      if (e.component >= 0) row.args[to_string(fc.rate.component)] = e.component;
    }
    rows.push_back(std::move(row));
  }
  return draw("ctwin trial " + std::to_string(trial) + ": " + scenario.name, rows, config.save_us);
}

std::string timeline_json(const std::string& title, const std::vector<LoggedEvent>& events) {
  std::vector<Row> rows;
  rows.reserve(events.size());
  Micros previous = 0;
  for (const auto& e : events) {
    Row row{seconds_to_micros(e.time_s), e.kind, e.node, e.detail.substr(0, e.detail.find(' ')), ordered_json::object()};
    // A live log writes a restore when it is done, with how long it took: the phase began then.
    if (const auto at = e.detail.find("seconds="); e.kind == EventKind::RestoreBegin && at != std::string::npos)
      row.time = std::max(previous, row.time - seconds_to_micros(std::strtod(e.detail.c_str() + at + 8, nullptr)));
    previous = row.time;
    if (!e.detail.empty()) row.args["detail"] = e.detail;
    if (e.node >= 0) row.args["node"] = e.node;
    if (e.gpu >= 0) row.args["gpu"] = e.gpu;
    if (e.code >= 0) row.args["xid"] = e.code;
    if (row.label.empty()) row.label = to_string(e.kind);
    rows.push_back(std::move(row));
  }
  return draw(title, rows, 0);
}

}  // namespace ctwin
