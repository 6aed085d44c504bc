#include "live/job/messages.hpp"

#include <array>
#include <utility>

namespace ctwin::live {

namespace {

constexpr std::array<std::pair<PlanKind, const char*>, 5> kPlanNames{
    {{PlanKind::Wait, "wait"}, {PlanKind::Stop, "stop"}, {PlanKind::Run, "run"}, {PlanKind::Exit, "exit"}, {PlanKind::Precheck, "precheck"}}};
constexpr std::array<std::pair<NodeState, const char*>, 4> kStateNames{
    {{NodeState::Waiting, "waiting"}, {NodeState::Running, "running"}, {NodeState::Stopped, "stopped"}, {NodeState::Finished, "finished"}}};

template <class E, std::size_t N>
const char* name_of(const std::array<std::pair<E, const char*>, N>& names, E value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

template <class E, std::size_t N>
std::optional<E> value_named(const std::array<std::pair<E, const char*>, N>& names, const std::string& name) {
  for (const auto& [v, n] : names)
    if (name == n) return v;
  return std::nullopt;
}

}  // namespace

bool node_may_report(EventKind kind) {
  switch (kind) {
    case EventKind::Health:
    case EventKind::SlowBegin:
    case EventKind::SlowEnd:
    case EventKind::ToRepair:
    case EventKind::Evicted: return true;
    default: return false;
  }
}

const char* to_string(PlanKind kind) { return name_of(kPlanNames, kind); }
std::optional<PlanKind> plan_kind_named(const std::string& name) { return value_named(kPlanNames, name); }
const char* to_string(NodeState state) { return name_of(kStateNames, state); }
std::optional<NodeState> node_state_named(const std::string& name) { return value_named(kStateNames, name); }

}  // namespace ctwin::live
