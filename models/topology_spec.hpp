#pragma once
//! The shape of a cluster's fabric, as a scenario gives it (`cluster.topology`). Kept apart from
//! topology.hpp so that the scenario types do not pull in Boost.Graph.

namespace ctwin {

enum class TopologyShape { TorFatTree, RailOptimized };

struct TopologySpec {
  TopologyShape shape = TopologyShape::RailOptimized;
  int nodes = 0;
  int gpus_per_node = 8;
  int nics_per_node = 8;      //!< rails: one per GPU on H100 systems
  int nvswitches_per_node = 4;
  int nodes_per_rack = 4;
  int nodes_per_unit = 32;    //!< rail-optimized: nodes sharing one set of rail leaves
  int spines = 16;
  double oversubscription = 1.0;  //!< leaf downlink bandwidth / uplink bandwidth
  double nic_bytes_per_s = 50e9;
  double nvlink_bytes_per_s = 450e9;
  int storage_servers = 0;
};

inline int leaf_count(const TopologySpec& t) {
  if (t.shape == TopologyShape::TorFatTree) return (t.nodes + t.nodes_per_rack - 1) / t.nodes_per_rack;
  return (t.nodes + t.nodes_per_unit - 1) / t.nodes_per_unit * t.nics_per_node;
}
inline int cable_count(const TopologySpec& t) { return t.nodes * t.nics_per_node; }

}  // namespace ctwin
