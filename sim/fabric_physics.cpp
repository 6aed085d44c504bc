#include "sim/fabric_physics.hpp"

#include <algorithm>

#include "sim/simgrid/transfer_fabric.hpp"

namespace ctwin {

FabricPhysics::FabricPhysics(StoragePath path, std::string cache_directory)
    : path_(std::move(path)), path_signature_(path_.signature()), disk_(std::move(cache_directory), "transfer") {}

TransferQuestion slice_question(const StoragePath& p, const TransferQuestion& q) {
  TransferQuestion s = q;
  const int n = std::max(1, q.movers);
  const bool peer = q.what == Transfer::Replicate || q.what == Transfer::PeerRestore;
  int slice = 0;
  if (peer) {
    slice = p.shares_fabric() ? std::min(n, p.group_nodes) : std::min(n, 2);
    s.movers = slice;
    s.degraded_movers = p.degraded_peer_bytes_per_s > 0 ? std::min(q.degraded_movers, slice) : 0;
  } else {
    // The slice holds min(n, group) movers and the busiest server's share, ceil(n / servers).
    const int servers = std::max(1, p.servers);
    const int writers = (n + servers - 1) / servers;
    const int fewest = (writers - 1) * servers + 1;  // the smallest count with as many writers
    slice = p.shares_fabric() ? std::min(n, p.group_nodes) : writers;
    s.movers = p.shares_fabric() && n < p.group_nodes ? n : p.shares_fabric() ? std::max(p.group_nodes, fewest) : fewest;
    s.degraded_movers = p.degraded_node_bytes_per_s > 0 ? std::min(q.degraded_movers, slice) : 0;
  }
  if (!p.shares_fabric()) s.spines_down = 0, s.rail_leaves_down = 0;  // no uplinks in the slice
  const bool beside_training = q.what == (peer ? Transfer::Replicate : Transfer::Persist);
  s.contention = beside_training && q.contention && p.has_training_traffic();
  return s;
}

TransferCost FabricPhysics::cost(const TransferQuestion& asked) const {
  const TransferQuestion question = slice_question(path_, asked);
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = memory_.find(question); it != memory_.end()) return it->second;
  const std::string key = path_signature_ + " | " + question.signature();
  TransferCost cost;
  if (const auto answer = disk_.read(key); answer && answer->contains("us") && answer->contains("training_speed")) {
    cost.us = answer->at("us").get<Micros>();
    cost.training_speed = answer->at("training_speed").get<double>();
    ++read_from_disk_;
  } else {
    cost = simulate_transfer(path_, question);
    ++simulated_;
    disk_.write(key, {{"us", cost.us}, {"training_speed", cost.training_speed}});
  }
  return memory_[question] = cost;
}

int FabricPhysics::simulated() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return simulated_;
}

int FabricPhysics::read_from_disk() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return read_from_disk_;
}

}  // namespace ctwin
