#include "sim/simgrid/platform.hpp"

#include <map>

#include <string>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "models/topology.hpp"

namespace sg4 = simgrid::s4u;

namespace ctwin {

void init_simgrid_engine() {
  xbt_log_control_set("root.thres:critical");
  // Guard pages cost a memory mapping per actor: 100k-GPU collective phases need them off.
  static int argc = 7;
  static char arg0[] = "ctwin", arg1[] = "--cfg=network/model:CM02", arg2[] = "--cfg=network/crosstraffic:0",
              arg3[] = "--cfg=network/TCP-gamma:0", arg4[] = "--cfg=contexts/stack-size:256",
              arg5[] = "--log=root.thres:critical", arg6[] = "--cfg=contexts/guard-size:0";
  static char* argv[] = {arg0, arg1, arg2, arg3, arg4, arg5, arg6, nullptr};
  static sg4::Engine engine(&argc, argv);
}

Platform build_platform(const PlatformSpec& spec) {
  Platform p;
  auto* zone = sg4::create_star_zone("cluster");
  auto attach = [zone](sg4::Host* host, double bytes_per_s) {
    const sg4::Link* link =
        zone->create_split_duplex_link(host->get_name() + "-link", bytes_per_s)->set_latency(1e-6)->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
  };
  p.nodes.reserve(static_cast<std::size_t>(spec.nodes));
  for (int i = 0; i < spec.nodes; ++i) {
    sg4::Host* host = zone->create_host("node-" + std::to_string(i), spec.node_speed_factors)->seal();
    attach(host, spec.node_link_bytes_per_s > 0 ? spec.node_link_bytes_per_s : 1e12);
    p.nodes.push_back(host);
  }
  for (int i = 0; i < spec.storage_servers; ++i) {
    sg4::Host* host = zone->create_host("storage-" + std::to_string(i), 1.0);
    p.disks.push_back(host->create_disk("disk", spec.disk_read_bytes_per_s, spec.disk_write_bytes_per_s)->seal());
    host->seal();
    attach(host, spec.server_link_bytes_per_s);
    p.storage.push_back(host);
  }
  p.control = zone->create_host("control", 1.0)->seal();
  attach(p.control, 1e12);
  zone->seal();
  return p;
}

Platform build_platform(const Topology& topology, const PlatformSpec& spec) {
  Platform p;
  const TopologyGraph& g = topology.graph();
  auto* zone = sg4::create_dijkstra_zone("fabric", true);
  p.leaf_links.resize(static_cast<std::size_t>(topology.leaves()));
  p.spine_links.resize(static_cast<std::size_t>(topology.spines()));
  p.cable_links.resize(static_cast<std::size_t>(topology.cables()));

  // Netpoints: hosts for the nodes ctwin tracks, routers for switches.
  std::map<std::size_t, simgrid::kernel::routing::NetPoint*> point;
  for (auto [v, end] = boost::vertices(g); v != end; ++v) {
    const TopologyVertex& vx = g[*v];
    if (vx.kind == VertexKind::Node && vx.index < spec.nodes) {
      sg4::Host* host = zone->create_host("node-" + std::to_string(vx.index), spec.node_speed_factors)->seal();
      p.nodes.push_back(host);
      point[*v] = host->get_netpoint();
    } else if (vx.kind == VertexKind::Leaf) {
      point[*v] = zone->create_router("leaf-" + std::to_string(vx.index));
    } else if (vx.kind == VertexKind::Spine) {
      point[*v] = zone->create_router("spine-" + std::to_string(vx.index));
    }
  }
  auto connect = [&](simgrid::kernel::routing::NetPoint* a, simgrid::kernel::routing::NetPoint* b, const std::string& name,
                     double bytes_per_s) {
    sg4::Link* link = zone->create_split_duplex_link(name, bytes_per_s)->set_latency(1e-6)->seal();
    zone->add_route(a, b, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
    return link;
  };
  // NIC cables (node to leaf): one link per cable; where several cables join the same node and
  // leaf (a ToR), one link carries them all, and only a leaf failure takes it down.
  std::map<std::pair<int, int>, std::vector<const TopologyVertex*>> cables_by_pair;  // (node, leaf) -> NICs
  std::map<std::pair<int, int>, double> pair_bandwidth;
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    std::size_t a = boost::source(*e, g), b = boost::target(*e, g);
    if (g[*e].kind != LinkKind::Cable) continue;
    if (g[a].kind != VertexKind::Nic) std::swap(a, b);  // a: the NIC, b: its leaf
    if (g[a].node >= spec.nodes) continue;
    cables_by_pair[{g[a].node, g[b].index}].push_back(&g[a]);
    pair_bandwidth[{g[a].node, g[b].index}] += g[*e].bytes_per_s;
  }
  std::vector<std::size_t> leaf_vertex(static_cast<std::size_t>(topology.leaves()));
  for (auto [v, end] = boost::vertices(g); v != end; ++v)
    if (g[*v].kind == VertexKind::Leaf) leaf_vertex[static_cast<std::size_t>(g[*v].index)] = *v;
  for (const auto& [pair, nics] : cables_by_pair) {
    const auto [node, leaf] = pair;
    const std::string name = nics.size() == 1 ? "cable-" + std::to_string(nics.front()->index)
                                              : "node-" + std::to_string(node) + "-leaf-" + std::to_string(leaf);
    sg4::Link* l = connect(p.nodes[static_cast<std::size_t>(node)]->get_netpoint(),
                           point.at(leaf_vertex[static_cast<std::size_t>(leaf)]), name, pair_bandwidth[pair]);
    if (nics.size() == 1) p.cable_links[static_cast<std::size_t>(nics.front()->index)].push_back(l);
    p.leaf_links[static_cast<std::size_t>(leaf)].push_back(l);
  }
  // Uplinks (leaf to spine).
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    std::size_t a = boost::source(*e, g), b = boost::target(*e, g);
    const TopologyLink& link = g[*e];
    if (link.kind == LinkKind::Uplink && g[a].kind != VertexKind::Storage && g[b].kind != VertexKind::Storage) {
      if (g[a].kind != VertexKind::Leaf) std::swap(a, b);  // a: the leaf, b: the spine
      sg4::Link* l = connect(point.at(a), point.at(b), "uplink-" + std::to_string(g[a].index) + "-" + std::to_string(g[b].index),
                             link.bytes_per_s);
      p.leaf_links[static_cast<std::size_t>(g[a].index)].push_back(l);
      p.spine_links[static_cast<std::size_t>(g[b].index)].push_back(l);
    }
  }
  // Storage servers and the control host hang off every spine.
  for (int i = 0; i < spec.storage_servers; ++i) {
    sg4::Host* host = zone->create_host("storage-" + std::to_string(i), 1.0);
    p.disks.push_back(host->create_disk("disk", spec.disk_read_bytes_per_s, spec.disk_write_bytes_per_s)->seal());
    host->seal();
    for (int sp = 0; sp < topology.spines(); ++sp)
      connect(host->get_netpoint(), point.at(topology.spine_vertex(sp)),
              "storage-" + std::to_string(i) + "-spine-" + std::to_string(sp), spec.server_link_bytes_per_s);
    p.storage.push_back(host);
  }
  p.control = zone->create_host("control", 1.0)->seal();
  connect(p.control->get_netpoint(), point.at(topology.spine_vertex(0)), "control-link", 1e12);
  zone->seal();
  return p;
}

}  // namespace ctwin
