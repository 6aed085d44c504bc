#include "core/event.hpp"

namespace ctwin {

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::Fault: return "fault";
    case EventKind::FaultIgnored: return "fault_ignored";
    case EventKind::Interrupted: return "interrupted";
    case EventKind::Detected: return "detected";
    case EventKind::Diagnosed: return "diagnosed";
    case EventKind::NodeDown: return "node_down";
    case EventKind::NodeUp: return "node_up";
    case EventKind::ToRepair: return "to_repair";
    case EventKind::Retired: return "retired";
    case EventKind::Misdiagnosed: return "misdiagnosed";
    case EventKind::SpareAssigned: return "spare_assigned";
    case EventKind::WaitingForSpare: return "waiting_for_spare";
    case EventKind::RestartBegin: return "restart";
    case EventKind::RestoreBegin: return "restore";
    case EventKind::Running: return "running";
    case EventKind::CheckpointDone: return "checkpoint";
    case EventKind::SlowBegin: return "slow_begin";
    case EventKind::SlowEnd: return "slow_end";
    case EventKind::Escalated: return "escalated";
    case EventKind::Rollback: return "rollback";
    case EventKind::MaintenanceBegin: return "maintenance";
    case EventKind::Evicted: return "evicted";
    case EventKind::Shrunk: return "shrunk";
    case EventKind::Grown: return "grown";
    case EventKind::End: return "end";
    case EventKind::Health: return "health";
    case EventKind::Start: return "start";
    case EventKind::Ledger: return "ledger";
  }
  return "?";
}

std::optional<EventKind> event_kind_named(std::string_view name) {
  for (int k = 0; k <= static_cast<int>(EventKind::Ledger); ++k)
    if (name == to_string(static_cast<EventKind>(k))) return static_cast<EventKind>(k);
  return std::nullopt;
}

}  // namespace ctwin
