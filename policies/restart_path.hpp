#pragma once
//! Which way a job comes back after an interruption (issue 51): relaunch every process, re-enter the
//! training function in the processes that survived (in-process, as NVIDIA's NVRx), or give a
//! replaced rank a process started ahead (warm standby). One rule for the simulator's trial and the
//! live master: in-process where every fault of the recovery left the healthy ranks' processes
//! alive and the failed rank's node usable; otherwise the warm standby where the scenario keeps one;
//! otherwise a relaunch.

#include <optional>
#include <string>

#include "core/units.hpp"
#include "models/remediation.hpp"
#include "models/scenario.hpp"

namespace ctwin {

enum class RestartPath { Relaunch, InProcess, WarmStandby };
const char* to_string(RestartPath path);
std::optional<RestartPath> restart_path_named(const std::string& name);
//! The path a restart took when its nodes came back different ways: the slowest one (a node
//! started cold holds the whole job for a relaunch's time).
RestartPath slower(RestartPath a, RestartPath b);

//! Whether in-process restart can take this fault: a crash or hang (a watchdog's flap too) whose
//! remediation is a plain restart (or none) on a host that stayed up, and a class the scenario's
//! `restart.in_process.faults` names when it names any. A reset, reboot or replacement never is:
//! the CUDA context or the node is gone.
bool in_process_takes(const RestartMechanisms& spec, const FaultClass& fc, Act action, bool host_down);
//! The same rule for a class known by name and effect (the live master's LiveFaultClass).
bool in_process_takes(const RestartMechanisms& spec, const std::string& fault_class, Effect effect, Act action, bool host_down);

//! The path of a recovery: `in_process_possible` when every fault in it was one in-process takes
//! (a planned stop, maintenance or a regrowth, is not: new processes, or new members, join).
RestartPath restart_path(const RestartMechanisms& spec, bool in_process_possible);

//! What the path costs beyond any hardware action: the scenario's overhead for it.
Micros restart_overhead_us(const RestartMechanisms& spec, Micros relaunch_us, RestartPath path);

//! A live node's in-process rejoin, as its agent watches it (live/supervisor).
struct InProcessRejoin {
  //! A kept trainer must tear its collectives down (every local rank says `rejoining` or has
  //! failed) within this of its generation's stop; past it the trainer is hung or blocked in a
  //! collective, and is killed and launched anew (its peers' collectives fail with it).
  static constexpr double kTeardownS = 5;
  //! A rank that left its collectives waits for the next generation; a peer's failure brings one
  //! within moments. None within this: the rank's own error, or a peer's that no agent reported
  //! yet: the node reports it as a crash, for the master to weigh.
  static constexpr double kAloneS = 2;
  static bool teardown_overdue(double seconds_since_stop) { return seconds_since_stop >= kTeardownS; }
  static bool alone_too_long(double seconds_rejoining) { return seconds_rejoining >= kAloneS; }
};

}  // namespace ctwin
