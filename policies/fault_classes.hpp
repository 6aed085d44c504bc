#pragma once
//! Names what interrupted a live run with the fault classes the simulator uses, so that `ctwin
//! validate` counts interruptions by the same classes: an Xid is the scenario's class with that
//! Xid, else the built-in catalogue's the Xid table names (models/xid_table), else "xid<N>" with
//! NVIDIA's effect and action for it (an Xid 63 counts and stops nothing), else a restart. A crash
//! with no hardware signal is `software_bug`, a hang `nccl_hang`, a NaN loss `sdc`: the
//! scenario's or the catalogue's classes of those names, with their effect and remediation.

#include <string>

#include "models/scenario.hpp"

namespace ctwin {

struct LiveFaultClass {
  std::string name;
  Effect effect = Effect::Crash;
  Act act = Act::Restart;  //!< the class's remediation (None: it stops nothing)
  bool known = true;       //!< false: an Xid in neither the scenario, the catalogue nor NVIDIA's table
  //! Silent corruption: the checkpoints since it struck are bad, the run goes back past them.
  bool rolls_back() const { return effect == Effect::Sdc; }
};

//! What stopped a live job when no hardware said why.
//! NodeLost: a node's agent went silent (the host died or left the network): its node is replaced.
//! RemapPending: stopped at a checkpoint for the GPU reset a pending row remap needs.
//! Straggler: a node whose ranks compute slower than their peers of the same stage, evicted.
enum class LiveStop { Crash, Hang, NanLoss, NodeLost, RemapPending, Straggler };

LiveFaultClass classify_xid(const Scenario& scenario, int xid);
LiveFaultClass classify_stop(const Scenario& scenario, LiveStop stop);
//! A class by the name a node reported (the job master's view of a node's fault): the scenario's,
//! else the catalogue's, else one of the live stops' names, else a crash that restarts.
LiveFaultClass classify_named(const Scenario& scenario, const std::string& name);
//! Whether a trainer stopped this way can still save when asked: a hung one cannot.
inline bool trainer_can_save_after(LiveStop stop) { return stop != LiveStop::Hang; }

}  // namespace ctwin
