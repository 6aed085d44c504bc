// Checkpoint transfers priced in the trial's state: in closed form (the native engine) and as
// SimGrid flows and disk I/O on a slice of the fabric (the SimGrid engine). Without training beside
// them the two agree; beside training, SimGrid measures what the closed form approximates.
#include <catch2/catch.hpp>

#include <filesystem>
#include <vector>

#include "sim/fabric_physics.hpp"
#include "sim/simgrid/transfer_fabric.hpp"
#include "sim/transfer_physics.hpp"

using namespace ctwin;

namespace {

//! Two nodes on a leaf with a 10 GB/s link each; storage so fast only the node link counts.
StoragePath hand_checkable() {
  StoragePath p;
  p.shard_bytes = 8e9;  // 8 chunks of 1 GB
  p.node_bytes_per_s = 10e9;
  p.group_nodes = 2;
  p.group_uplink_bytes_per_s = 1e15;
  p.spines = 1;
  p.servers = 1;
  p.server_bytes_per_s = p.disk_write_bytes_per_s = p.disk_read_bytes_per_s = 1e15;
  // A 1 s step: 0.6 s of compute, then a 0.4 s reduction (4 GB at the link's rate), all exposed.
  p.step_s = 1.0;
  p.traffic_s = 0.4;
  p.traffic_exposed_s = 0.4;
  return p;
}

double seconds(const TransferCost& c) { return micros_to_seconds(c.us); }

}  // namespace

TEST_CASE("a persist beside training, by hand: SimGrid shares the node link", "[physics][simgrid]") {
  const StoragePath p = hand_checkable();
  // Alone: 8 GB at 10 GB/s.
  CHECK(seconds(simulate_transfer(p, {Transfer::Persist, 2, 0, false})) == Approx(0.8).margin(1e-3));
  // Beside training: 6 GB go alone in the first 0.6 s; then the reduction starts and each gets
  // 5 GB/s, so the last 2 GB take 0.4 s (done at 1.0 s). The reduction moved 2 GB meanwhile and
  // sends its other 2 GB alone in 0.2 s: the step took 1.2 s, 0.2 s of training lost in 1.0 s.
  const TransferCost beside = simulate_transfer(p, {Transfer::Persist, 2, 0, true});
  CHECK(seconds(beside) == Approx(1.0).margin(1e-3));
  CHECK(beside.training_speed == Approx(0.8).margin(1e-3));
  // The closed form keeps the persist at 0.8 s and gives the reduction 5 GB/s throughout: its 4 GB
  // take 0.8 s, the step 1.4 s. The engines differ by design; `run --engine both` reports it.
  const TransferCost closed = analytic_transfer(p, {Transfer::Persist, 2, 0, true});
  CHECK(seconds(closed) == Approx(0.8).margin(1e-4));
  CHECK(closed.training_speed == Approx(1.0 / 1.4).epsilon(1e-6));
  // With contention off nothing slows.
  CHECK(analytic_transfer(p, {Transfer::Persist, 2, 0, false}).training_speed == 1.0);
}

TEST_CASE("a mover that lost a rail sets the transfer's end, in both engines", "[physics][simgrid]") {
  StoragePath p = hand_checkable();
  p.degraded_node_bytes_per_s = 5e9;  // one of two NICs left
  for (Transfer what : {Transfer::Save, Transfer::Restore}) {
    const TransferQuestion q{what, 2, 0, false, 1};
    INFO(q.signature());
    CHECK(seconds(simulate_transfer(p, q)) == Approx(1.6).margin(1e-3));  // 8 GB at 5 GB/s
    CHECK(seconds(analytic_transfer(p, q)) == Approx(1.6).margin(1e-3));
  }
  p.degraded_node_bytes_per_s = 0;  // a node on one NIC: nothing to lose, nothing narrows
  CHECK(seconds(analytic_transfer(p, {Transfer::Save, 2, 0, false, 1})) == Approx(0.8).margin(1e-3));
}

TEST_CASE("without training beside them, SimGrid and the closed form agree within 0.1%", "[physics][simgrid]") {
  StoragePath star;  // a storage network of its own: the busiest server sets the time
  star.shard_bytes = 4.5e9;
  star.node_bytes_per_s = 50e9;
  star.servers = 250;
  star.server_bytes_per_s = 50e9;
  star.disk_write_bytes_per_s = 8e9;
  star.disk_read_bytes_per_s = 28e9;
  StoragePath fabric = star;  // on the compute fabric: 32-node groups, 64 spines
  fabric.group_nodes = 32;
  fabric.node_bytes_per_s = 8 * 50e9;                     // eight NICs
  fabric.group_uplink_bytes_per_s = 32 * 8 * 50e9 / 4.0;  // 4:1 oversubscribed: the uplinks bind
  fabric.spines = 64;
  fabric.server_bytes_per_s = fabric.disk_write_bytes_per_s = fabric.disk_read_bytes_per_s = 1e13;
  for (const StoragePath* p : {&star, &fabric})
    for (Transfer what : {Transfer::Save, Transfer::Persist, Transfer::Restore})
      for (int movers : {1, 7, 1248, 2048})
        for (int spines_down : {0, 16}) {
          const TransferQuestion q{what, movers, spines_down, false};
          INFO((p == &star ? "star " : "fabric ") << q.signature());
          CHECK(seconds(simulate_transfer(*p, q)) == Approx(seconds(analytic_transfer(*p, q))).epsilon(1e-3));
        }
  // The state matters: a shrunk job writes fewer shards, a spine out narrows every group's uplinks.
  CHECK(analytic_transfer(star, {Transfer::Save, 1000, 0, false}).us < analytic_transfer(star, {Transfer::Save, 1248, 0, false}).us);
  CHECK(analytic_transfer(fabric, {Transfer::Save, 2048, 16, false}).us > analytic_transfer(fabric, {Transfer::Save, 2048, 0, false}).us);
}

TEST_CASE("the SimGrid physics simulates a state once, then reads it from memory and disk", "[physics][simgrid]") {
  const std::string dir = (std::filesystem::temp_directory_path() / "ctwin-physics-cache-test").string();
  std::filesystem::remove_all(dir);
  const TransferQuestion q{Transfer::Persist, 2, 0, true};
  TransferCost first;
  {
    const FabricPhysics physics(hand_checkable(), dir);
    first = physics.cost(q);
    CHECK(physics.cost(q).us == first.us);
    CHECK(physics.simulated() == 1);
  }
  const FabricPhysics again(hand_checkable(), dir);
  const TransferCost second = again.cost(q);
  CHECK(again.simulated() == 0);
  CHECK(again.read_from_disk() == 1);
  CHECK(second.us == first.us);
  CHECK(second.training_speed == first.training_speed);
  // A different state is a different question.
  CHECK(again.cost({Transfer::Persist, 2, 0, false}).us != first.us);
  CHECK(again.simulated() == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("states alike on the fabric share one simulation, which answers as each would alone", "[physics][simgrid]") {
  StoragePath p = hand_checkable();
  p.group_nodes = 4;  // a slice is one leaf group of 4 movers...
  p.servers = 4;      // ...with the busiest server's share
  p.degraded_node_bytes_per_s = 5e9;
  p.degraded_peer_bytes_per_s = p.peer_bytes_per_s = 10e9;
  const std::string dir = (std::filesystem::temp_directory_path() / "ctwin-slice-question-test").string();
  std::filesystem::remove_all(dir);
  const FabricPhysics physics(p, dir);
  // Pairs that build the same slice: more rail-short movers than the slice holds; mover counts
  // with as many on the busiest server; contention where no training runs beside (a restore).
  const std::vector<std::pair<TransferQuestion, TransferQuestion>> alike{
      {{Transfer::Persist, 64, 0, true, 10, 1}, {Transfer::Persist, 64, 0, true, 30, 1}},
      {{Transfer::Persist, 61, 0, true, 0, 0}, {Transfer::Persist, 64, 0, true, 0, 0}},
      {{Transfer::Restore, 64, 1, true, 2, 0}, {Transfer::Restore, 63, 1, false, 2, 0}},
      {{Transfer::Replicate, 64, 0, true, 9, 1}, {Transfer::Replicate, 5, 0, true, 4, 1}},
  };
  for (const auto& [a, b] : alike) {
    CHECK(slice_question(p, a) == slice_question(p, b));
    const TransferCost alone_a = simulate_transfer(p, a), alone_b = simulate_transfer(p, b);
    CHECK(alone_a.us == alone_b.us);
    CHECK(alone_a.training_speed == alone_b.training_speed);
    CHECK(physics.cost(a).us == alone_a.us);
    CHECK(physics.cost(b).us == alone_a.us);
  }
  CHECK(physics.simulated() == 4);
  // Not alike: a rail-short mover fewer inside the slice, a writer more on the busiest server.
  CHECK_FALSE(slice_question(p, {Transfer::Persist, 64, 0, true, 3, 1}) == slice_question(p, {Transfer::Persist, 64, 0, true, 2, 1}));
  CHECK_FALSE(slice_question(p, {Transfer::Persist, 60, 0, true, 0, 0}) == slice_question(p, {Transfer::Persist, 61, 0, true, 0, 0}));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a peer copy, by hand, in both engines: the node link, then the group's uplinks", "[physics][simgrid]") {
  StoragePath p = hand_checkable();
  p.peer_bytes_per_s = 10e9;
  for (Transfer what : {Transfer::Replicate, Transfer::PeerRestore}) {
    INFO(TransferQuestion{what}.signature());
    // 8 GB over a 10 GB/s link to the peer, the uplinks wide open: 0.8 s.
    CHECK(seconds(analytic_transfer(p, {what, 2, 0, false})) == Approx(0.8).margin(1e-4));
    CHECK(seconds(simulate_transfer(p, {what, 2, 0, false})) == Approx(0.8).margin(1e-3));
    // One of two NICs left on a mover: 1.6 s.
    StoragePath rail = p;
    rail.degraded_peer_bytes_per_s = 5e9;
    CHECK(seconds(analytic_transfer(rail, {what, 2, 0, false, 1})) == Approx(1.6).margin(1e-4));
    CHECK(seconds(simulate_transfer(rail, {what, 2, 0, false, 1})) == Approx(1.6).margin(1e-3));
    // Four nodes behind 20 GB/s of uplinks on two spines: 5 GB/s each (1.6 s), one spine out 2.5
    // GB/s (3.2 s); one node alone still has its link's 10 GB/s.
    StoragePath narrow = p;
    narrow.group_nodes = 4;
    narrow.group_uplink_bytes_per_s = 20e9;
    narrow.spines = 2;
    for (auto [movers, spines_down, expected] : {std::tuple{4, 0, 1.6}, {4, 1, 3.2}, {1, 0, 0.8}}) {
      CHECK(seconds(analytic_transfer(narrow, {what, movers, spines_down, false})) == Approx(expected).margin(1e-4));
      CHECK(seconds(simulate_transfer(narrow, {what, movers, spines_down, false})) == Approx(expected).margin(1e-3));
    }
  }
  // A replica beside training loses the node link's half to each reduction it meets, as a persist:
  // done at 1.0 s, 0.2 s of training lost (see the persist's case above).
  const TransferCost beside = simulate_transfer(p, {Transfer::Replicate, 2, 0, true});
  CHECK(seconds(beside) == Approx(1.0).margin(1e-3));
  CHECK(beside.training_speed == Approx(0.8).margin(1e-3));
  CHECK(analytic_transfer(p, {Transfer::Replicate, 2, 0, true}).training_speed == Approx(1.0 / 1.4).epsilon(1e-6));
  // A restore runs while the job is stopped: nothing to slow.
  CHECK(simulate_transfer(p, {Transfer::PeerRestore, 2, 0, true}).training_speed == 1.0);
}

TEST_CASE("a rail leaf out takes its share of the group's uplinks, in both engines", "[physics][simgrid]") {
  // Four nodes on four rails behind 20 GB/s of uplinks, storage and links wide: 5 GB/s each (1.6
  // s for 8 GB); one rail leaf out leaves three quarters (15 GB/s, 2.13 s), a spine out as well
  // half of that (7.5 GB/s, 4.27 s).
  StoragePath p = hand_checkable();
  p.node_bytes_per_s = p.peer_bytes_per_s = 1e15;
  p.group_nodes = 4;
  p.group_rails = 4;
  p.group_uplink_bytes_per_s = 20e9;
  p.spines = 2;
  for (Transfer what : {Transfer::Save, Transfer::Restore, Transfer::Replicate}) {
    INFO(TransferQuestion{what}.signature());
    for (auto [spines_down, rails_down, expected] : {std::tuple{0, 0, 1.6}, {0, 1, 32e9 / 15e9}, {1, 1, 32e9 / 7.5e9}}) {
      TransferQuestion q{what, 4, spines_down, false};
      q.rail_leaves_down = rails_down;
      CHECK(seconds(analytic_transfer(p, q)) == Approx(expected).epsilon(1e-3));
      CHECK(seconds(simulate_transfer(p, q)) == Approx(expected).epsilon(1e-3));
    }
  }
  // A ToR group (no rails) has nothing to lose to a rail leaf.
  p.group_rails = 0;
  TransferQuestion q{Transfer::Save, 4, 0, false};
  q.rail_leaves_down = 1;
  CHECK(seconds(analytic_transfer(p, q)) == Approx(1.6).epsilon(1e-3));
}
