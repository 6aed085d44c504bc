#pragma once
//! The fabric a step's collectives run on, as data (sim/simgrid/comm_fabric.hpp simulates it): each
//! GPU has an NVLink port to its node's NVSwitch and a NIC on its rail (GPU g of every node is on
//! rail g: a rail-optimized fat tree). A rail's leaf switch serves `nodes_per_leaf` nodes and
//! reaches the other leaves through spines over an uplink of (nodes_per_leaf x NIC) / oversubscription.

#include <map>

namespace ctwin {

struct CommFabricSpec {
  int gpus_per_node = 8;
  double nvlink_bytes_per_s = 300e9;  //!< per GPU, per direction
  double nvlink_latency_s = 1e-6;
  double nic_bytes_per_s = 25e9;      //!< per GPU (one NIC each), per direction
  double nic_latency_s = 5e-6;
  int nodes_per_leaf = 0;             //!< 0: one leaf per rail serves every node (no spine hop)
  double oversubscription = 1;
};

//! Ports that do not run at full speed, by global GPU id (node x gpus_per_node + gpu).
struct FabricState {
  std::map<int, double> nic_factor;     //!< 0: the NIC or its cable is down
  std::map<int, double> nvlink_factor;
  double uplink_factor = 1;             //!< every leaf's uplink (a slow or failed spine is shared by all)
  bool operator==(const FabricState&) const = default;
};

}  // namespace ctwin
