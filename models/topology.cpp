#include "models/topology.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace ctwin {

Topology Topology::build(const TopologySpec& spec) {
  if (spec.nodes < 1) throw std::invalid_argument("topology: nodes must be at least 1");
  if (spec.nics_per_node < 1 || spec.gpus_per_node < 1 || spec.nodes_per_rack < 1 || spec.spines < 1)
    throw std::invalid_argument("topology: counts must be at least 1");
  if (spec.shape == TopologyShape::RailOptimized && spec.nodes_per_unit < 1)
    throw std::invalid_argument("topology: nodes_per_unit must be at least 1");
  if (!(spec.oversubscription >= 1.0)) throw std::invalid_argument("topology: oversubscription must be >= 1");

  Topology t;
  t.spec_ = spec;
  t.racks_ = (spec.nodes + spec.nodes_per_rack - 1) / spec.nodes_per_rack;
  TopologyGraph& g = t.graph_;
  auto add = [&g](TopologyVertex v) { return boost::add_vertex(v, g); };

  for (int s = 0; s < spec.spines; ++s) t.spine_vertices_.push_back(add({VertexKind::Spine, s, -1, -1, -1}));

  // Leaves: one per rack (ToR), or one per rail per scalable unit (rail-optimized).
  const int units = spec.shape == TopologyShape::RailOptimized ? (spec.nodes + spec.nodes_per_unit - 1) / spec.nodes_per_unit : 0;
  if (spec.shape == TopologyShape::TorFatTree) {
    for (int r = 0; r < t.racks_; ++r) t.leaf_vertices_.push_back(add({VertexKind::Leaf, r, -1, r, -1}));
  } else {
    for (int u = 0; u < units; ++u)
      for (int rail = 0; rail < spec.nics_per_node; ++rail)
        t.leaf_vertices_.push_back(add({VertexKind::Leaf, u * spec.nics_per_node + rail, -1, -1, rail}));
  }
  // Every leaf uplinks to every spine; the uplinks share the leaf's downlink bandwidth / oversubscription.
  for (std::size_t leaf : t.leaf_vertices_) {
    const int downlinks = spec.shape == TopologyShape::TorFatTree ? spec.nodes_per_rack * spec.nics_per_node
                                                                   : spec.nodes_per_unit;
    const double uplink = downlinks * spec.nic_bytes_per_s / spec.oversubscription / spec.spines;
    for (std::size_t spine : t.spine_vertices_) boost::add_edge(leaf, spine, {LinkKind::Uplink, uplink}, g);
  }

  for (int n = 0; n < spec.nodes; ++n) {
    const int rack = n / spec.nodes_per_rack;
    const std::size_t node = add({VertexKind::Node, n, n, rack, -1});
    t.node_vertices_.push_back(node);
    std::vector<std::size_t> nvswitches;
    for (int k = 0; k < spec.nvswitches_per_node; ++k) {
      const std::size_t sw = add({VertexKind::NvSwitch, n * spec.nvswitches_per_node + k, n, rack, -1});
      boost::add_edge(node, sw, {LinkKind::NodeInternal, 0}, g);
      nvswitches.push_back(sw);
    }
    for (int k = 0; k < spec.gpus_per_node; ++k) {
      const std::size_t gpu = add({VertexKind::Gpu, n * spec.gpus_per_node + k, n, rack, -1});
      boost::add_edge(node, gpu, {LinkKind::Pcie, 0}, g);
      for (std::size_t sw : nvswitches)
        boost::add_edge(gpu, sw, {LinkKind::NvLink, spec.nvlink_bytes_per_s / std::max<std::size_t>(1, nvswitches.size())}, g);
    }
    for (int rail = 0; rail < spec.nics_per_node; ++rail) {
      const std::size_t nic = add({VertexKind::Nic, n * spec.nics_per_node + rail, n, rack, rail});
      t.nic_vertices_.push_back(nic);
      boost::add_edge(node, nic, {LinkKind::Pcie, 0}, g);
      const std::size_t leaf = spec.shape == TopologyShape::TorFatTree
                                   ? t.leaf_vertices_[static_cast<std::size_t>(rack)]
                                   : t.leaf_vertices_[static_cast<std::size_t>((n / spec.nodes_per_unit) * spec.nics_per_node + rail)];
      boost::add_edge(nic, leaf, {LinkKind::Cable, spec.nic_bytes_per_s}, g);
    }
  }
  for (int s = 0; s < spec.storage_servers; ++s) {
    const std::size_t server = add({VertexKind::Storage, s, -1, -1, -1});
    for (std::size_t spine : t.spine_vertices_) boost::add_edge(server, spine, {LinkKind::Uplink, spec.nic_bytes_per_s}, g);
  }
  return t;
}

int Topology::rack_of(int node) const { return node / spec_.nodes_per_rack; }

std::vector<int> Topology::nodes_in_rack(int rack) const {
  std::vector<int> out;
  for (int n = rack * spec_.nodes_per_rack; n < std::min(spec_.nodes, (rack + 1) * spec_.nodes_per_rack); ++n) out.push_back(n);
  return out;
}

std::vector<int> Topology::nodes_served_by_leaf(int leaf) const {
  std::set<int> nodes;
  for (auto [e, end] = boost::out_edges(leaf_vertices_.at(static_cast<std::size_t>(leaf)), graph_); e != end; ++e) {
    const TopologyVertex& v = graph_[boost::target(*e, graph_)];
    if (v.kind == VertexKind::Nic) nodes.insert(v.node);
  }
  return {nodes.begin(), nodes.end()};
}

//! A NIC is cut off when none of its cables leads to a working leaf that still has a working
//! uplink; a node is down when all its NICs are cut off. Leaves are judged once, NICs once each.
BlastRadius Topology::lost_uplinks(const std::vector<std::size_t>& failed_vertices, int failed_cable) const {
  const std::set<std::size_t> failed(failed_vertices.begin(), failed_vertices.end());
  std::vector<char> leaf_alive(leaf_vertices_.size(), 0);
  for (std::size_t i = 0; i < leaf_vertices_.size(); ++i) {
    const std::size_t leaf = leaf_vertices_[i];
    if (failed.count(leaf)) continue;
    for (auto [e, end] = boost::out_edges(leaf, graph_); e != end && !leaf_alive[i]; ++e) {
      const std::size_t other = boost::target(*e, graph_);
      leaf_alive[i] = graph_[other].kind == VertexKind::Spine && !failed.count(other);
    }
  }
  // Only NICs behind a dead leaf can be cut off: look at their nodes alone.
  std::set<int> candidates;
  for (std::size_t i = 0; i < leaf_vertices_.size(); ++i) {
    if (leaf_alive[i]) continue;
    for (auto [e, end] = boost::out_edges(leaf_vertices_[i], graph_); e != end; ++e) {
      const TopologyVertex& other = graph_[boost::target(*e, graph_)];
      if (other.kind == VertexKind::Nic) candidates.insert(other.node);
    }
  }
  if (failed_cable >= 0) candidates.insert(failed_cable / spec_.nics_per_node);
  BlastRadius out;
  for (int n : candidates) {
    std::vector<int> lost;
    for (int rail = 0; rail < spec_.nics_per_node; ++rail) {
      const int cable = n * spec_.nics_per_node + rail;
      const std::size_t nic = nic_vertices_[static_cast<std::size_t>(cable)];
      bool reachable = false;
      for (auto [e, end] = boost::out_edges(nic, graph_); e != end; ++e) {
        const TopologyVertex& other = graph_[boost::target(*e, graph_)];
        if (other.kind == VertexKind::Leaf && cable != failed_cable) reachable |= leaf_alive[static_cast<std::size_t>(other.index)] != 0;
      }
      if (!reachable) lost.push_back(rail);
    }
    if (static_cast<int>(lost.size()) == spec_.nics_per_node) out.nodes_down.push_back(n);
    else
      for (int rail : lost) out.rails_lost.emplace_back(n, rail);
  }
  return out;
}

BlastRadius Topology::leaf_failure(int leaf) const { return lost_uplinks({leaf_vertices_.at(static_cast<std::size_t>(leaf))}, -1); }

BlastRadius Topology::spine_failure(int spine) const {
  BlastRadius out = lost_uplinks({spine_vertices_.at(static_cast<std::size_t>(spine))}, -1);
  out.cross_leaf_bandwidth_factor = static_cast<double>(spec_.spines - 1) / spec_.spines;
  return out;
}

BlastRadius Topology::cable_failure(int cable) const {
  if (cable < 0 || cable >= cables()) throw std::out_of_range("topology: no such cable");
  // One cable touches one NIC: only its node can lose anything.
  const int node = cable / spec_.nics_per_node;
  BlastRadius out;
  int lost = 0;
  std::vector<int> rails;
  for (int rail = 0; rail < spec_.nics_per_node; ++rail) {
    const int c = node * spec_.nics_per_node + rail;
    bool reachable = false;
    for (auto [e, end] = boost::out_edges(nic_vertices_[static_cast<std::size_t>(c)], graph_); e != end; ++e)
      reachable |= graph_[boost::target(*e, graph_)].kind == VertexKind::Leaf && c != cable;
    if (!reachable) {
      ++lost;
      rails.push_back(rail);
    }
  }
  if (lost == spec_.nics_per_node) out.nodes_down.push_back(node);
  else
    for (int rail : rails) out.rails_lost.emplace_back(node, rail);
  return out;
}

}  // namespace ctwin
