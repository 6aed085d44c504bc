#pragma once
//! What happens to a run, simulated or live: one typed event. The trial emits these, the live
//! supervisor records them, and the one event-log writer and reader (event_log.hpp) turn them
//! into rows and back (docs/event-log.md). Trivially copyable, so engines can ship them between
//! processes as bytes.

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

#include "core/units.hpp"

namespace ctwin {

enum class EventKind : std::uint8_t {
  Fault,            //!< a fault struck a component in the job (detail: class)
  FaultIgnored,     //!< struck a slot that had no node, or a network part the job does not use
  Interrupted,      //!< the job (or its recovery) stopped: a crash or hang, the recovery chain restarts
  Detected,
  Diagnosed,
  NodeDown,         //!< the node's host is off (reboot or replacement)
  NodeUp,           //!< back on: rebooted, or returned from repair
  ToRepair,
  Retired,          //!< failed too often: leaves the fleet instead of coming back
  Misdiagnosed,     //!< the wrong node was blamed (node: the one replaced); the bad one stays
  SpareAssigned,
  WaitingForSpare,
  RestartBegin,
  RestoreBegin,
  Running,
  CheckpointDone,
  SlowBegin,        //!< speed 0: a stall (a link flap being ridden out)
  SlowEnd,
  Escalated,        //!< a repeated fault on the same part: the stronger action is taken
  Rollback,         //!< silent corruption found: back to the last clean checkpoint
  MaintenanceBegin,
  Evicted,          //!< the controller took a node out (a straggler, or one the precheck failed)
  Shrunk,           //!< elastic: whole replicas dropped (component: replicas now active)
  Grown,            //!< elastic: replicas added back (component: replicas now active)
  End,
  Health,           //!< live: an observation that stops nothing (corrected ECC, a warning, the precheck's exit)
  Start,            //!< live: the first row, at time 0: the wall clock (UTC) and the host, to line the log up with others
  Ledger,           //!< a closing row: one ledger category's seconds
};

//! The name in the log's `kind` column ("fault", "restart", "checkpoint", ...).
const char* to_string(EventKind kind);
//! The kind a log row names; nullopt for a name the format does not have.
std::optional<EventKind> event_kind_named(std::string_view name);

struct RunEvent {
  Micros time = 0;
  std::int32_t node = -1;  //!< physical node id: job nodes first, then spares
  std::int32_t gpu = -1;
  EventKind kind = EventKind::Fault;
  std::int32_t code = -1;         //!< Xid when the fault class has one
  std::int32_t fault_class = -1;  //!< index into the log's fault classes, when the event concerns one
  double speed = 1.0;             //!< SlowBegin/SlowEnd: the node's speed factor
  std::int32_t component = -1;    //!< network faults: which leaf, spine or cable; Shrunk/Grown: replicas
};
static_assert(std::is_trivially_copyable_v<RunEvent>, "engines ship events between processes as bytes");

}  // namespace ctwin
