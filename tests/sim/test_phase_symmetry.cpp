// A phase's flows reduce to one component of each shape: what a 16k-GPU collective costs to
// simulate, and that the reduction keeps every flow a degraded port touches.
#include <catch2/catch.hpp>

#include "sim/simgrid/comm_fabric.hpp"
#include "support/step_fixtures.hpp"

using namespace ctwin;
using namespace ctwin::test;

namespace {

//! One ring phase over rail 0 of `nodes` nodes: each node's GPU 0 sends to the next node's.
std::vector<Flow> rail_ring(int nodes, double bytes) {
  std::vector<Flow> flows;
  for (int n = 0; n < nodes; ++n) flows.push_back({n * 8, ((n + 1) % nodes) * 8, bytes});
  return flows;
}

}  // namespace

TEST_CASE("a ring phase reduces to one flow of each shape, and times as the whole ring does", "[step][collectives]") {
  CommFabricSpec f = a100_fabric();
  f.nodes_per_leaf = 4;  // 16 nodes: 4 leaves; the flows leaving a leaf cross its uplink
  const std::vector<Flow> ring = rail_ring(16, 1e8);
  // Two shapes: inside a leaf (NIC to NIC), and from one leaf to the next (through both uplinks).
  CHECK(representative_flows(f, {}, ring).size() == 2);
  // A NIC at half speed adds the flow out of it and the flow into it: each its own shape.
  FabricState half;
  half.nic_factor[5 * 8] = 0.5;
  const std::vector<Flow> kept = representative_flows(f, half, ring);
  CHECK(kept.size() == 4);
  CHECK(std::count_if(kept.begin(), kept.end(), [](const Flow& x) { return x.src == 40 || x.dst == 40; }) == 2);
  // The phase is the slowest flow's: half the NIC's bandwidth for 1e8 bytes, plus the hops' latency.
  const PhaseResult r = simulate_phase(f, half, ring, 600);
  CHECK(r.seconds == Approx(1e8 / (0.5 * f.nic_bytes_per_s)).epsilon(0.02));
}

TEST_CASE("cross-rail exchanges under many leaves reduce to one component", "[step][collectives]") {
  CommFabricSpec f = a100_fabric();
  f.nodes_per_leaf = 2;
  // Eight groups, each the two nodes of one leaf, exchanging across rails (up rail r's uplink,
  // down rail r + 2's). Both nodes of a leaf send up the same rail's uplink: those two flows are
  // one component; 4 rails x 8 leaves make 32 components of one shape.
  std::vector<Flow> flows;
  for (int group = 0; group < 8; ++group)
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        for (int ga = 0; ga < 8; ga += 2)  // four GPUs of each node, on different rails
          if (a != b) flows.push_back({(group * 2 + a) * 8 + ga, (group * 2 + b) * 8 + (ga + 2) % 8, 1e6});
  const std::vector<Flow> kept = representative_flows(f, {}, flows);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].src % 8 == kept[1].src % 8);          // the same rail's uplink
  CHECK(kept[0].src / 16 == kept[1].src / 16);        // under one leaf
  CHECK(simulate_phase(f, {}, flows, 600).seconds == Approx(simulate_phase(f, {}, kept, 600).seconds));
}
