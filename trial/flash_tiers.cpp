#include "trial/flash_tiers.hpp"

#include <algorithm>

namespace ctwin {

void FlashTiers::record(Micros end, Micros work) {
  ++snapshots_;
  if (snapshots_ % costs_.persist_every == 0) {
    const Micros start = persisting_.empty() ? end : std::max(end, persisting_.back().second);  // persists queue
    persisting_.emplace_back(work, start + costs_.persist_us);
  }
  if (costs_.peer_replicas) replicating_.emplace_back(work, end + costs_.replication_us);
}

void FlashTiers::settle(Micros t) {
  while (!persisting_.empty() && persisting_.front().second <= t) {
    durable_work_ = std::max(durable_work_, persisting_.front().first);
    persisting_.pop_front();
  }
  while (!replicating_.empty() && replicating_.front().second <= t) {
    replicated_work_ = std::max(replicated_work_, replicating_.front().first);
    replicating_.pop_front();
  }
}

void FlashTiers::fold(Micros cycles, Micros tau, Micros newest_work) {
  // Persists and replicas in flight land within the cycles the caller still steps through before
  // its horizon: promote them, then the newest snapshot persisted inside the folded span, if one was.
  for (const auto& p : persisting_) durable_work_ = std::max(durable_work_, p.first);
  for (const auto& r : replicating_) replicated_work_ = std::max(replicated_work_, r.first);
  persisting_.clear();
  replicating_.clear();
  snapshots_ += cycles;
  const Micros since_persisted = snapshots_ % costs_.persist_every;
  if (since_persisted < cycles) durable_work_ = std::max(durable_work_, newest_work - since_persisted * tau);
  replicated_work_ = std::max(replicated_work_, newest_work);
}

}  // namespace ctwin
