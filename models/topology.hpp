#pragma once
//! The cluster as a graph (Boost.Graph): GPUs, NVSwitches, nodes, NICs, leaf and spine switches,
//! storage servers, and the links between them. Two common shapes:
//!  - ToR fat tree: each rack's nodes hang off one top-of-rack leaf, leaves uplink to the spines;
//!  - rail-optimized fat tree: NIC r of every node in a scalable unit plugs into that unit's rail-r
//!    leaf, so one rail switch serves one NIC of many nodes.
//! Fault domains are read off the graph: what loses every uplink when a switch or a cable fails.

#include <cstdint>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "models/topology_spec.hpp"

namespace ctwin {

enum class VertexKind : std::uint8_t { Gpu, NvSwitch, Node, Nic, Leaf, Spine, Storage };
enum class LinkKind : std::uint8_t { NvLink, Pcie, NodeInternal, Cable, Uplink };

struct TopologyVertex {
  VertexKind kind = VertexKind::Node;
  std::int32_t index = 0;  //!< among vertices of its kind
  std::int32_t node = -1;  //!< owning node (GPU, NVSwitch, NIC)
  std::int32_t rack = -1;
  std::int32_t rail = -1;  //!< NICs and rail leaves
};

struct TopologyLink {
  LinkKind kind = LinkKind::Cable;
  double bytes_per_s = 0;
};

using TopologyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, TopologyVertex, TopologyLink>;

//! What a failure takes away. A node is down when it has lost every NIC; a node that lost some
//! rails keeps running without them (NCCL errors or a slower job, per scenario).
struct BlastRadius {
  std::vector<int> nodes_down;
  std::vector<std::pair<int, int>> rails_lost;  //!< (node, rail), for nodes still up
  double cross_leaf_bandwidth_factor = 1.0;     //!< a spine failure cuts the bisection
};

class Topology {
 public:
  //! Throws std::invalid_argument on an impossible spec (the scenario loader checks it first).
  static Topology build(const TopologySpec& spec);

  const TopologySpec& spec() const { return spec_; }
  const TopologyGraph& graph() const { return graph_; }
  int racks() const { return racks_; }
  int leaves() const { return static_cast<int>(leaf_vertices_.size()); }
  int spines() const { return static_cast<int>(spine_vertices_.size()); }
  int rack_of(int node) const;
  std::vector<int> nodes_in_rack(int rack) const;
  std::vector<int> nodes_served_by_leaf(int leaf) const;
  //! The cable from a node's NIC to its leaf: one per NIC.
  int cables() const { return spec_.nodes * spec_.nics_per_node; }
  std::size_t spine_vertex(int spine) const { return spine_vertices_.at(static_cast<std::size_t>(spine)); }

  BlastRadius leaf_failure(int leaf) const;
  BlastRadius spine_failure(int spine) const;
  BlastRadius cable_failure(int cable) const;  //!< cable = node * nics_per_node + nic

 private:
  BlastRadius lost_uplinks(const std::vector<std::size_t>& failed_vertices, int failed_cable) const;

  TopologySpec spec_;
  TopologyGraph graph_;
  int racks_ = 0;
  std::vector<std::size_t> node_vertices_, nic_vertices_, leaf_vertices_, spine_vertices_;
};

}  // namespace ctwin
