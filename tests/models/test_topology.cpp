// The topology graph and the fault domains read off it.
#include <catch2/catch.hpp>

#include <map>

#include "models/topology.hpp"

using namespace ctwin;

namespace {

TopologySpec small(TopologyShape shape) {
  TopologySpec s;
  s.shape = shape;
  s.nodes = 64;
  s.nodes_per_rack = 4;
  s.nodes_per_unit = 16;
  s.spines = 4;
  return s;
}

}  // namespace

TEST_CASE("a ToR switch failure takes down exactly its rack", "[topology]") {
  const Topology t = Topology::build(small(TopologyShape::TorFatTree));
  REQUIRE(t.racks() == 16);
  REQUIRE(t.leaves() == 16);
  for (int rack : {0, 7, 15}) {
    const BlastRadius b = t.leaf_failure(rack);
    CHECK(b.nodes_down == t.nodes_in_rack(rack));
    CHECK(b.rails_lost.empty());
  }
}

TEST_CASE("a rail switch failure takes exactly one rail from every node it serves", "[topology]") {
  const Topology t = Topology::build(small(TopologyShape::RailOptimized));
  REQUIRE(t.leaves() == 4 * 8);  // 4 units x 8 rails
  const int leaf = 1 * 8 + 5;    // unit 1, rail 5
  const BlastRadius b = t.leaf_failure(leaf);
  CHECK(b.nodes_down.empty());
  REQUIRE(b.rails_lost.size() == 16);
  for (int i = 0; i < 16; ++i) {
    CHECK(b.rails_lost[static_cast<std::size_t>(i)].first == 16 + i);
    CHECK(b.rails_lost[static_cast<std::size_t>(i)].second == 5);
  }
  CHECK(t.nodes_served_by_leaf(leaf).size() == 16);
}

TEST_CASE("a cable takes one link, a spine cuts bandwidth and disconnects nothing", "[topology]") {
  const Topology rail = Topology::build(small(TopologyShape::RailOptimized));
  const BlastRadius cable = rail.cable_failure(10 * 8 + 3);
  CHECK(cable.nodes_down.empty());
  CHECK(cable.rails_lost == std::vector<std::pair<int, int>>{{10, 3}});
  const BlastRadius spine = rail.spine_failure(2);
  CHECK(spine.nodes_down.empty());
  CHECK(spine.rails_lost.empty());
  CHECK(spine.cross_leaf_bandwidth_factor == Approx(0.75));
}

TEST_CASE("the graph holds every component with its links", "[topology]") {
  TopologySpec spec = small(TopologyShape::RailOptimized);
  spec.storage_servers = 3;
  const Topology t = Topology::build(spec);
  std::map<VertexKind, int> count;
  for (auto [v, end] = boost::vertices(t.graph()); v != end; ++v) ++count[t.graph()[*v].kind];
  CHECK(count[VertexKind::Gpu] == 64 * 8);
  CHECK(count[VertexKind::Nic] == 64 * 8);
  CHECK(count[VertexKind::NvSwitch] == 64 * 4);
  CHECK(count[VertexKind::Node] == 64);
  CHECK(count[VertexKind::Spine] == 4);
  CHECK(count[VertexKind::Storage] == 3);
  CHECK_THROWS_AS(Topology::build(TopologySpec{}), std::invalid_argument);
}
