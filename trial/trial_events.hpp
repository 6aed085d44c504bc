#pragma once
//! What a trial tells the outside world as it runs: the event log (CSV) and the timeline are
//! written from these, and the SimGrid driver mirrors node state (off, on, slow) onto its hosts.

#include <cstdint>

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
  SlowBegin,         //!< speed 0: a stall (a link flap being ridden out)
  SlowEnd,
  Escalated,        //!< a repeated fault on the same part: the stronger action is taken
  Rollback,         //!< silent corruption found: back to the last clean checkpoint
  MaintenanceBegin,
  Evicted,          //!< the controller took a node out (a straggler, or one the precheck failed)
  Shrunk,           //!< elastic: whole replicas dropped (component: replicas now active)
  Grown,            //!< elastic: replicas added back (component: replicas now active)
  End,
};

const char* to_string(EventKind kind);

struct TrialEvent {
  Micros time = 0;
  std::int32_t node = -1;  //!< physical node id: job nodes first, then spares
  std::int32_t gpu = -1;
  EventKind kind = EventKind::Fault;
  std::int32_t code = -1;         //!< Xid when the fault class has one
  std::int32_t fault_class = -1;  //!< index into the scenario's faults, when the event concerns one
  double speed = 1.0;      //!< SlowBegin/SlowEnd: the node's speed factor
  std::int32_t component = -1;  //!< network faults: which leaf, spine or cable
};

class TrialObserver {
 public:
  virtual ~TrialObserver() = default;
  virtual void on_event(const TrialEvent& event) = 0;
  //! Checkpoint completions are folded into arithmetic unless an observer asks to see each one.
  virtual bool wants_checkpoints() const { return false; }
};

}  // namespace ctwin
