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
  //! A multi-node NVLink domain (GB200 NVL72: 18 nodes of 4 GPUs, 9 NVLink switch trays): nodes in
  //! order form domains of this many (0: NVLink stays inside each node).
  int nvlink_domain_nodes = 0;
  int nvswitches_per_domain = 9;
};

inline int leaf_count(const TopologySpec& t) {
  if (t.shape == TopologyShape::TorFatTree) return (t.nodes + t.nodes_per_rack - 1) / t.nodes_per_rack;
  return (t.nodes + t.nodes_per_unit - 1) / t.nodes_per_unit * t.nics_per_node;
}
inline int cable_count(const TopologySpec& t) { return t.nodes * t.nics_per_node; }
inline int nvlink_domain_count(const TopologySpec& t) {
  return t.nvlink_domain_nodes > 0 ? (t.nodes + t.nvlink_domain_nodes - 1) / t.nvlink_domain_nodes : 0;
}
inline int nvswitch_count(const TopologySpec& t) { return nvlink_domain_count(t) * t.nvswitches_per_domain; }

}  // namespace ctwin
