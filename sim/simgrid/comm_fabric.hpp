#pragma once
//! One phase of a step's collectives as concurrent SimGrid flows: the question the step model asks.
//!
//! The fabric: each GPU has an NVLink port to its node's NVSwitch and a NIC on its rail (GPU g of
//! every node is on rail g: a rail-optimized fat tree). A rail's leaf switch serves
//! `nodes_per_leaf` nodes and reaches the other leaves through spines over an uplink of
//! (nodes_per_leaf x NIC) / oversubscription. Only the GPUs, ports and uplinks the phase's flows
//! touch are built, so a 2,048-flow ring phase costs a few tens of milliseconds. A degraded port
//! runs at its bandwidth factor; a dead one (factor 0) makes the phase a hang at the timeout,
//! never a deadlock.

#include <vector>

#include "models/fabric.hpp"

namespace ctwin {

struct Flow {
  int src = 0, dst = 0;  //!< global GPU ids
  double bytes = 0;
};

struct PhaseResult {
  double seconds = 0;  //!< until the last flow arrives; the timeout when hung
  bool hung = false;   //!< a flow crossed a dead port: NCCL would hang until its watchdog fires
};

//! The flows worth simulating: one component of each shape. Flows that share a link direction
//! form a component; components share nothing (split-duplex links, a non-blocking core above the
//! uplinks), so the phase ends when its slowest component does. Components with the same shape
//! (each flow's bytes, and its hops' kinds, bandwidth factors and number of sharing flows) are
//! taken to finish together: in a ring phase each flow is its own component, in an all-to-all
//! each leaf's groups are one, so a 16k-GPU phase shrinks to a handful of flows.
std::vector<Flow> representative_flows(const CommFabricSpec& fabric, const FabricState& state, const std::vector<Flow>& flows);

//! Runs the flows at once on the fabric (in a forked SimGrid process) and times them, one
//! component of each shape (representative_flows).
PhaseResult simulate_phase(const CommFabricSpec& fabric, const FabricState& state, const std::vector<Flow>& flows,
                           double timeout_s);

}  // namespace ctwin
