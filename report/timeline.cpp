#include "report/timeline.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace ctwin {

using ordered_json = nlohmann::ordered_json;

std::string timeline_json(const Scenario& scenario, const TrialConfig& config, const std::vector<RunEvent>& events, int trial) {
  enum Track { kJob = 1, kCheckpoints = 2, kFaults = 3, kFirstNode = 100 };
  ordered_json trace = ordered_json::array();
  auto name_track = [&](int tid, const std::string& name) {
    trace.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
    trace.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  };
  trace.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1},
                   {"args", {{"name", "ctwin trial " + std::to_string(trial) + ": " + scenario.name}}}});
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
  for (const auto& e : events) {
    const FaultClass* fc = e.fault_class >= 0 ? &scenario.faults[static_cast<std::size_t>(e.fault_class)] : nullptr;
    switch (e.kind) {
      case EventKind::Fault: {
        ordered_json args{{"class", fc->name}, {"effect", to_string(fc->effect)}, {"action", to_string(fc->action)}};
        if (e.node >= 0) args["node"] = e.node;
        if (e.gpu >= 0) args["gpu"] = e.gpu;
        if (fc->xid) args["xid"] = *fc->xid;
        if (e.component >= 0) args[to_string(fc->rate.component)] = e.component;
        if (e.node >= 0) instant(node_track(e.node), fc->name, e.time, args);
        instant(kFaults, fc->name, e.time, std::move(args));
        break;
      }
      case EventKind::Interrupted: switch_phase("detection", e.time); break;
      case EventKind::Detected: switch_phase("diagnosis", e.time); break;
      case EventKind::WaitingForSpare: switch_phase("waiting for spares", e.time); break;
      case EventKind::RestartBegin: switch_phase("restart", e.time); break;
      case EventKind::RestoreBegin: switch_phase("restore", e.time); break;
      case EventKind::Running: switch_phase("running", e.time); break;
      case EventKind::CheckpointDone: span(kCheckpoints, "save", e.time - config.save_us, e.time); break;
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
        if (e.node >= 0) instant(node_track(e.node), to_string(e.kind), e.time, ordered_json::object());
        break;
      case EventKind::End: switch_phase("end", e.time); break;
      default: break;
    }
  }
  ordered_json doc{{"displayTimeUnit", "ms"}, {"traceEvents", std::move(trace)}};
  return doc.dump() + "\n";
}

}  // namespace ctwin
