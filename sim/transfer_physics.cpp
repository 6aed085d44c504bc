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
    const int live = std::max(1, p.spines - q.spines_down);
    r.network = std::min(r.network, p.group_uplink_bytes_per_s * live / p.spines / group);
  }
  // The transfer ends with its slowest mover: one that lost a rail, if any.
  if (q.degraded_movers > 0 && p.degraded_node_bytes_per_s > 0) r.network = std::min(r.network, p.degraded_node_bytes_per_s);
  return r;
}

}  // namespace

TransferCost analytic_transfer(const StoragePath& p, const TransferQuestion& q) {
  const MoverRates r = rates(p, q);
  const double chunk = p.shard_bytes / p.chunks;
  const double t_net = 2 * p.link_latency_s + chunk / r.network;  // a node's link and the storage link
  const double t_disk = chunk / r.disk;
  TransferCost cost;
  cost.us = seconds_to_micros(t_net + t_disk + (p.chunks - 1) * std::max(t_net, t_disk));
  if (q.what == Transfer::Persist && q.contention && p.has_training_traffic()) {
    // The reduction's bytes on the node link, at full rate: dp_collective_s x link.
    const double link = p.node_bytes_per_s;
    const double reduction_rate = link - std::min(r.network, link / 2);
    const double reduction = p.dp_collective_s * link / reduction_rate;
    const double hidden = p.dp_collective_s - p.dp_exposed_s;
    const double step = p.step_s - p.dp_collective_s + std::max(reduction, hidden);
    cost.training_speed = std::min(1.0, p.step_s / step);
  }
  return cost;
}

}  // namespace ctwin
