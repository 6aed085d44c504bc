#include "sim/simgrid/transfer_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/simgrid/platform.hpp"
#include "sim/simgrid/simulation_server.hpp"
#include "sim/simgrid/subprocess.hpp"

namespace sg4 = simgrid::s4u;

namespace ctwin {
namespace {

using Direction = sg4::LinkInRoute::Direction;

struct Slice {
  std::vector<sg4::Host*> movers;
  std::vector<sg4::Host*> peers;  //!< a peer copy's other ends, one per mover
  sg4::Host* storage = nullptr;
  const sg4::Disk* disk = nullptr;
};

//! A star: every mover's node link to the centre; the storage host behind the group's uplinks
//! (with a topology) and its own link. Every route crosses two latencies, a node's and the storage
//! link's or another node's: SimGrid's CM02 shares a link in inverse proportion to each flow's
//! route latency (a TCP trait), and equal routes make that a fair share per flow, as NCCL's and a
//! storage client's flows get on a lossless fabric.
Slice build_slice(const StoragePath& p, const TransferQuestion& q, int movers, double storage_share) {
  Slice s;
  auto* zone = sg4::create_star_zone("slice");
  auto link = [&](const std::string& name, double bytes_per_s, double latency_s) {
    return zone->create_split_duplex_link(name, bytes_per_s)->set_latency(latency_s)->seal();
  };
  // The nodes that lost a rail are in the slice: the transfer ends with them.
  const int degraded = p.degraded_node_bytes_per_s > 0 ? std::min(q.degraded_movers, movers) : 0;
  for (int i = 0; i < movers; ++i) {
    sg4::Host* host = zone->create_host("node-" + std::to_string(i), 1.0)->seal();
    const double nic = i < degraded ? p.degraded_node_bytes_per_s : p.node_bytes_per_s;
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link("nic-" + std::to_string(i), nic, p.link_latency_s), Direction::UP}}, true);
    s.movers.push_back(host);
  }
  s.storage = zone->create_host("storage", 1.0);
  s.disk = s.storage->create_disk("disks", p.disk_read_bytes_per_s * storage_share, p.disk_write_bytes_per_s * storage_share)->seal();
  s.storage->seal();
  std::vector<sg4::LinkInRoute> route{{link("storage-net", p.server_bytes_per_s * storage_share, p.link_latency_s), Direction::UP}};
  if (p.shares_fabric()) {
    route.emplace_back(link("uplinks", p.live_uplink_bytes_per_s(q.spines_down, q.rail_leaves_down), 0.0), Direction::UP);
  }
  zone->add_route(s.storage->get_netpoint(), nullptr, nullptr, nullptr, route, true);
  zone->seal();
  return s;
}

//! A peer copy's slice: each mover's link to the fabric, a peer of its own in another leaf group
//! behind that group's live uplinks (with a topology), and the peer's link. The same two latencies
//! per route as the storage slice.
Slice build_peer_slice(const StoragePath& p, const TransferQuestion& q, int movers) {
  Slice s;
  auto* zone = sg4::create_star_zone("peer-slice");
  auto link = [&](const std::string& name, double bytes_per_s, double latency_s) {
    return zone->create_split_duplex_link(name, bytes_per_s)->set_latency(latency_s)->seal();
  };
  const int degraded = p.degraded_peer_bytes_per_s > 0 ? std::min(q.degraded_movers, movers) : 0;
  sg4::Link* uplinks = nullptr;
  if (p.shares_fabric()) {
    uplinks = link("uplinks", p.live_uplink_bytes_per_s(q.spines_down, q.rail_leaves_down), 0.0);
  }
  for (int i = 0; i < movers; ++i) {
    const std::string id = std::to_string(i);
    sg4::Host* host = zone->create_host("node-" + id, 1.0)->seal();
    const double nic = i < degraded ? p.degraded_peer_bytes_per_s : p.peer_bytes_per_s;
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link("nic-" + id, nic, p.link_latency_s), Direction::UP}}, true);
    s.movers.push_back(host);
    sg4::Host* peer = zone->create_host("peer-" + id, 1.0)->seal();
    std::vector<sg4::LinkInRoute> route{{link("peer-nic-" + id, p.peer_bytes_per_s, p.link_latency_s), Direction::UP}};
    if (uplinks) route.emplace_back(uplinks, Direction::UP);
    zone->add_route(peer->get_netpoint(), nullptr, nullptr, nullptr, route, true);
    s.peers.push_back(peer);
  }
  zone->seal();
  return s;
}

//! Shared by the actors of one transfer.
struct Run {
  const StoragePath* path;
  const Slice* slice;
  std::uint64_t chunk_bytes = 0;
  std::uint64_t shard_bytes = 0;  //!< a peer copy's one message
  double link_bytes_per_s = 0;     //!< the node link training shares (its reduction's bytes at full rate)
  int movers_left = 0;
  double done_at = 0;
  double lost_training_s = 0;  //!< summed over the movers' nodes
};

void write_shard(Run* run) {
  sg4::Host* self = sg4::this_actor::get_host();
  std::vector<sg4::IoPtr> writes;
  for (int i = 0; i < run->path->chunks; ++i) {
    sg4::Comm::sendto(self, run->slice->storage, run->chunk_bytes);
    writes.push_back(run->slice->disk->write_async(run->chunk_bytes));
  }
  for (auto& io : writes) io->wait();
  run->done_at = std::max(run->done_at, sg4::Engine::get_clock());
  --run->movers_left;
}

void read_shard(Run* run) {
  sg4::Host* self = sg4::this_actor::get_host();
  sg4::IoPtr read = run->slice->disk->read_async(run->chunk_bytes);
  for (int i = 0; i < run->path->chunks; ++i) {
    read->wait();
    if (i + 1 < run->path->chunks) read = run->slice->disk->read_async(run->chunk_bytes);
    sg4::Comm::sendto(run->slice->storage, self, run->chunk_bytes);
  }
  run->done_at = std::max(run->done_at, sg4::Engine::get_clock());
  --run->movers_left;
}

//! A snapshot copied to the mover's peer, or (a restore) pulled back from it.
void copy_to_peer(Run* run, sg4::Host* peer) {
  sg4::Comm::sendto(sg4::this_actor::get_host(), peer, run->shard_bytes);
  run->done_at = std::max(run->done_at, sg4::Engine::get_clock());
  --run->movers_left;
}

void copy_from_peer(Run* run, sg4::Host* peer) {
  sg4::Comm::sendto(peer, sg4::this_actor::get_host(), run->shard_bytes);
  run->done_at = std::max(run->done_at, sg4::Engine::get_clock());
  --run->movers_left;
}

//! One node of the job, training while the persist runs: compute, then the reduction to the ring
//! neighbour beside the hidden compute. Its last step ends after the persist; the time its steps
//! took beyond the healthy step is the training the persist cost it.
void train(Run* run, sg4::Host* neighbour) {
  const StoragePath& p = *run->path;
  sg4::Host* self = sg4::this_actor::get_host();
  const double bytes = p.traffic_s * run->link_bytes_per_s;
  const double start = sg4::Engine::get_clock();
  int steps = 0;
  while (run->movers_left > 0) {
    sg4::this_actor::sleep_for(p.step_s - p.traffic_s);
    sg4::CommPtr reduction = sg4::Comm::sendto_async(self, neighbour, bytes);
    sg4::this_actor::sleep_for(p.traffic_s - p.traffic_exposed_s);
    reduction->wait();
    ++steps;
  }
  run->lost_training_s += std::max(0.0, sg4::Engine::get_clock() - start - steps * p.step_s);
}

//! Runs the movers (and the job beside them) until the last mover is done.
TransferCost run_to_end(const Run& run, int movers, bool training) {
  sg4::Engine::get_instance()->run();
  TransferCost cost;
  cost.us = seconds_to_micros(run.done_at);
  if (training && run.done_at > 0) cost.training_speed = std::clamp(1.0 - run.lost_training_s / movers / run.done_at, 0.0, 1.0);
  return cost;
}

//! A peer copy: a leaf group's movers with their peers (or, with no shared uplinks, two movers:
//! the pairs are independent, and a degraded one sets the end).
TransferCost simulate_peer(const StoragePath& p, const TransferQuestion& q) {
  const int n = std::max(1, q.movers);
  const int movers = p.shares_fabric() ? std::min(n, p.group_nodes) : std::min(n, 2);
  init_simgrid_engine(false);  // a slice: a few actors
  const Slice slice = build_peer_slice(p, q, movers);
  Run run;
  run.path = &p;
  run.slice = &slice;
  run.shard_bytes = static_cast<std::uint64_t>(std::llround(p.shard_bytes));
  run.link_bytes_per_s = p.peer_bytes_per_s;
  run.movers_left = movers;
  const bool training = q.what == Transfer::Replicate && q.contention && p.has_training_traffic();
  for (int i = 0; i < movers; ++i) {
    const auto at = static_cast<std::size_t>(i);
    sg4::Actor::create("mover", slice.movers[at], q.what == Transfer::Replicate ? copy_to_peer : copy_from_peer, &run, slice.peers[at]);
    if (training && movers > 1)
      sg4::Actor::create("trainer", slice.movers[at], train, &run, slice.movers[static_cast<std::size_t>((i + 1) % movers)]);
  }
  return run_to_end(run, movers, training);
}

TransferCost simulate(const StoragePath& p, const TransferQuestion& q) {
  if (q.what == Transfer::Replicate || q.what == Transfer::PeerRestore) return simulate_peer(p, q);
  const int n = std::max(1, q.movers);
  // The movers are dealt to servers in turn: the busiest server has `writers` of them.
  const int writers = static_cast<int>(std::ceil(static_cast<double>(n) / p.servers));
  int movers = writers;
  double share = 1;  // servers' worth of links and disks in the slice
  if (p.shares_fabric()) {  // a leaf group, with as much storage as its movers get on the busiest server
    movers = std::min(n, p.group_nodes);
    share = static_cast<double>(movers) / writers;
  }
  init_simgrid_engine(false);  // a slice: a few actors
  const Slice slice = build_slice(p, q, movers, share);
  Run run;
  run.path = &p;
  run.slice = &slice;
  run.chunk_bytes = static_cast<std::uint64_t>(std::llround(p.shard_bytes / p.chunks));
  run.link_bytes_per_s = p.node_bytes_per_s;
  run.movers_left = movers;
  const bool training = q.what == Transfer::Persist && q.contention && p.has_training_traffic();
  for (int i = 0; i < movers; ++i) {
    sg4::Host* host = slice.movers[static_cast<std::size_t>(i)];
    sg4::Actor::create("mover", host, q.what == Transfer::Restore ? read_shard : write_shard, &run);
    if (training && movers > 1)
      sg4::Actor::create("trainer", host, train, &run, slice.movers[static_cast<std::size_t>((i + 1) % movers)]);
  }
  return run_to_end(run, movers, training);
}

std::string answer(const StoragePath& path, const TransferQuestion& question) {
  const TransferCost cost = simulate(path, question);
  ByteWriter out;
  out.put(cost.us);
  out.put(cost.training_speed);
  return out.bytes;
}

//! A question as bytes, answered in a child of the transfer server.
std::string answer_request(const std::string& request) {
  ByteReader in(request);
  const auto path = in.get<StoragePath>();
  return answer(path, in.get<TransferQuestion>());
}

}  // namespace

TransferCost simulate_transfer(const StoragePath& path, const TransferQuestion& question) {
  // One server a process, forked at the first question; a busy or lost one is bypassed.
  static const std::unique_ptr<SimulationServer> server = SimulationServer::start(&answer_request, false);
  ByteWriter request;
  request.put(path);
  request.put(question);
  std::optional<std::string> reply = server ? server->ask(request.bytes) : std::nullopt;
  if (!reply) reply = run_in_child([&](int fd) { write_all(fd, answer(path, question)); }, "checkpoint transfer on the fabric");
  ByteReader in(*reply);
  TransferCost cost;
  cost.us = in.get<Micros>();
  cost.training_speed = in.get<double>();
  return cost;
}

}  // namespace ctwin
