// The SimGrid platform generated from the topology graph: a host per tracked node, a link per
// cable (or per node and ToR), per uplink, and the links each part takes down when it fails.
#include <catch2/catch.hpp>

#include "models/topology.hpp"
#include "sim/simgrid/platform.hpp"
#include "sim/simgrid/subprocess.hpp"

using namespace ctwin;

namespace {

struct Shape {
  std::uint64_t nodes, storage, leaf0_links, spine0_links, cable0_links;
};

Shape platform_shape(const TopologySpec& topology, int tracked_nodes) {
  const std::string answer = run_in_child(
      [&](int fd) {
        init_simgrid_engine();
        PlatformSpec spec;
        spec.nodes = tracked_nodes;
        spec.storage_servers = 3;
        spec.server_link_bytes_per_s = spec.disk_read_bytes_per_s = spec.disk_write_bytes_per_s = 1e10;
        const Platform p = build_platform(Topology::build(topology), spec);
        ByteWriter out;
        out.put(Shape{p.nodes.size(), p.storage.size(), p.leaf_links.at(0).size(), p.spine_links.at(0).size(),
                      p.cable_links.at(0).size()});
        write_all(fd, out.bytes);
      },
      "platform shape");
  ByteReader in(answer);
  return in.get<Shape>();
}

TopologySpec fabric(TopologyShape shape) {
  TopologySpec t;
  t.shape = shape;
  t.nodes = 24;
  t.nodes_per_rack = 4;
  t.nodes_per_unit = 8;
  t.spines = 2;
  return t;
}

}  // namespace

TEST_CASE("the SimGrid platform is generated from the topology graph", "[simgrid][topology]") {
  SECTION("ToR fat tree: one link per node and ToR") {
    const Shape s = platform_shape(fabric(TopologyShape::TorFatTree), 20);
    CHECK(s.nodes == 20);  // the job's and spares' nodes; the idle rack has none
    CHECK(s.storage == 3);
    CHECK(s.leaf0_links == 4 + 2);    // its rack's 4 nodes + an uplink to each spine
    CHECK(s.spine0_links == 6);       // one uplink per ToR
    CHECK(s.cable0_links == 0);       // a single cable is not a link of its own here
  }
  SECTION("rail-optimized: one link per NIC cable") {
    const Shape s = platform_shape(fabric(TopologyShape::RailOptimized), 24);
    CHECK(s.leaf0_links == 8 + 2);    // one NIC of each of the unit's 8 nodes + 2 uplinks
    CHECK(s.spine0_links == 3 * 8);   // 3 units x 8 rail leaves
    CHECK(s.cable0_links == 1);
  }
}
