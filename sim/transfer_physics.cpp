#include "sim/transfer_physics.hpp"

#include <algorithm>
#include <cmath>

namespace ctwin {

namespace {

//! A mover's rates, alone with its peers on the path (no training traffic).
struct MoverRates {
  double network = 0, disk = 0;
};

MoverRates rates(const StoragePath& p, const TransferQuestion& q) {
  const int n = std::max(1, q.movers);
  const double disk = q.what == Transfer::Restore ? p.disk_read_bytes_per_s : p.disk_write_bytes_per_s;
  MoverRates r;
  const double writers = std::ceil(static_cast<double>(n) / p.servers);  // the busiest server's
  r.network = std::min(p.node_bytes_per_s, p.server_bytes_per_s / writers);
  r.disk = disk / writers;
  if (p.shares_fabric()) {
    const int group = std::min(n, p.group_nodes);
    r.network = std::min(r.network, p.live_uplink_bytes_per_s(q.spines_down, q.rail_leaves_down) / group);
  }
  // The transfer ends with its slowest mover: one that lost a rail, if any.
  if (q.degraded_movers > 0 && p.degraded_node_bytes_per_s > 0) r.network = std::min(r.network, p.degraded_node_bytes_per_s);
  return r;
}

//! A peer copy's rate: the mover's link to the peer, and with a topology its share of the group's
//! live uplinks (the peer is in another leaf group). No disk: the copy lands in memory.
double peer_rate(const StoragePath& p, const TransferQuestion& q) {
  const int n = std::max(1, q.movers);
  double rate = p.peer_bytes_per_s;
  if (q.degraded_movers > 0 && p.degraded_peer_bytes_per_s > 0) rate = std::min(rate, p.degraded_peer_bytes_per_s);
  if (p.shares_fabric()) {
    const int group = std::min(n, p.group_nodes);
    rate = std::min(rate, p.live_uplink_bytes_per_s(q.spines_down, q.rail_leaves_down) / group);
  }
  return rate;
}

//! The job's speed while a background transfer takes `rate` of a node link of `link` bytes/s: the
//! step's reduction gets what the transfer leaves, and at least half.
double training_speed_beside(const StoragePath& p, double rate, double link) {
  const double reduction_rate = link - std::min(rate, link / 2);
  const double reduction = p.traffic_s * link / reduction_rate;  // its bytes at the link's full rate
  const double hidden = p.traffic_s - p.traffic_exposed_s;
  const double step = p.step_s - p.traffic_s + std::max(reduction, hidden);
  return std::min(1.0, p.step_s / step);
}

}  // namespace

TransferCost analytic_transfer(const StoragePath& p, const TransferQuestion& q) {
  TransferCost cost;
  const bool background = q.what == Transfer::Persist || q.what == Transfer::Replicate;
  const bool beside_training = background && q.contention && p.has_training_traffic();
  if (q.what == Transfer::Replicate || q.what == Transfer::PeerRestore) {
    const double rate = peer_rate(p, q);
    cost.us = seconds_to_micros(2 * p.link_latency_s + p.shard_bytes / rate);
    if (beside_training) cost.training_speed = training_speed_beside(p, rate, p.peer_bytes_per_s);
    return cost;
  }
  const MoverRates r = rates(p, q);
  const double chunk = p.shard_bytes / p.chunks;
  const double t_net = 2 * p.link_latency_s + chunk / r.network;  // a node's link and the storage link
  const double t_disk = chunk / r.disk;
  cost.us = seconds_to_micros(t_net + t_disk + (p.chunks - 1) * std::max(t_net, t_disk));
  if (beside_training) cost.training_speed = training_speed_beside(p, r.network, p.node_bytes_per_s);
  return cost;
}

}  // namespace ctwin
