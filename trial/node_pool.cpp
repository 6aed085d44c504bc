#include "trial/node_pool.hpp"

#include <algorithm>
#include <cassert>
#include <numeric>

namespace ctwin {

NodePool::NodePool(int job_nodes, int spare_nodes, int retire_after)
    : slot_node_(static_cast<std::size_t>(job_nodes)),
      node_slot_(static_cast<std::size_t>(job_nodes + spare_nodes), -1),
      retire_after_(static_cast<std::size_t>(std::max(retire_after, 0))) {
  std::iota(slot_node_.begin(), slot_node_.end(), 0);  // slot i holds node i
  std::iota(node_slot_.begin(), node_slot_.begin() + job_nodes, 0);
  for (int i = 0; i < spare_nodes; ++i) spare_pool_.push_back(job_nodes + i);
  if (retire_after_ > 0) {
    node_failures_.assign(node_slot_.size() * retire_after_, 0);
    node_failure_count_.assign(node_slot_.size(), 0);
  }
}

void NodePool::vacate(int slot, int node, Micros swap_us) {
  assert(node_in_slot(slot) == node && "a node leaves the slot it holds");
  slot_node_[static_cast<std::size_t>(slot)] = -1;
  node_slot_[static_cast<std::size_t>(node)] = -1;
  vacant_slots_.push_back({slot, swap_us});
}

void NodePool::release_slots(int first, int end) {
  for (int slot = end - 1; slot >= first; --slot) {
    const int node = slot_node_[static_cast<std::size_t>(slot)];
    if (node < 0) continue;
    slot_node_[static_cast<std::size_t>(slot)] = -1;
    node_slot_[static_cast<std::size_t>(node)] = -1;
    spare_pool_.push_front(node);  // warm: it was running
  }
  vacant_slots_.erase(std::remove_if(vacant_slots_.begin(), vacant_slots_.end(), [first](const Vacancy& v) { return v.slot >= first; }),
                      vacant_slots_.end());
}

bool NodePool::hold_spare(int node, Micros back) {
  const auto it = std::find(spare_pool_.begin(), spare_pool_.end(), node);
  if (it == spare_pool_.end()) return false;  // in repair, or held already
  spare_pool_.erase(it);
  schedule_return(back, node);
  return true;
}

int NodePool::add_node() {
  const int node = static_cast<int>(node_slot_.size());
  node_slot_.push_back(-1);
  if (retire_after_ > 0) {
    node_failures_.resize(node_failures_.size() + retire_after_, 0);
    node_failure_count_.push_back(0);
  }
  return node;
}

void NodePool::record_failure(int node, Micros t) {
  if (retire_after_ == 0) return;
  auto& count = node_failure_count_[static_cast<std::size_t>(node)];
  node_failures_[static_cast<std::size_t>(node) * retire_after_ + count % retire_after_] = t;
  if (count < 65535) ++count;
}

bool NodePool::failed_too_often(int node, Micros since) const {
  if (retire_after_ == 0) return false;
  const Micros* ring = &node_failures_[static_cast<std::size_t>(node) * retire_after_];
  const std::size_t known = std::min<std::size_t>(node_failure_count_[static_cast<std::size_t>(node)], retire_after_);
  return known == retire_after_ && std::all_of(ring, ring + retire_after_, [since](Micros f) { return f >= since; });
}

}  // namespace ctwin
