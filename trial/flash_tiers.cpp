#include "trial/flash_tiers.hpp"

#include <algorithm>

namespace ctwin {

void FlashTiers::record(Micros end, Micros work) {
  ++snapshots_;
  if (snapshots_ % costs_.persist_every == 0) {
    settle(end);
    if (persisting_.work < 0) persisting_ = {work, end + costs_.persist_us};
    else waiting_work_ = work;  // skips any older snapshot that waited
  }
  if (costs_.peer_replicas) replicating_.emplace_back(work, end + costs_.replication_us);
}

void FlashTiers::settle(Micros t) {
  while (persisting_.work >= 0 && persisting_.done_at <= t) {
    durable_work_ = std::max(durable_work_, persisting_.work);
    const Micros done = persisting_.done_at;
    persisting_ = {};
    if (waiting_work_ >= 0) {  // the persister moves on to the newest snapshot at once
      persisting_ = {waiting_work_, done + costs_.persist_us};
      waiting_work_ = -1;
    }
  }
  while (!replicating_.empty() && replicating_.front().second <= t) {
    replicated_work_ = std::max(replicated_work_, replicating_.front().first);
    replicating_.pop_front();
  }
}

void FlashTiers::lose_in_flight() {
  persisting_ = {};
  waiting_work_ = -1;
}

void FlashTiers::fold(Micros cycles, Micros tau, Micros newest_work) {
  // Persists and replicas in flight land within the cycles the caller still steps through before
  // its horizon: promote them, then the newest snapshot persisted inside the folded span, if one was.
  durable_work_ = std::max({durable_work_, persisting_.work, waiting_work_});
  for (const auto& r : replicating_) replicated_work_ = std::max(replicated_work_, r.first);
  persisting_ = {};
  waiting_work_ = -1;
  replicating_.clear();
  snapshots_ += cycles;
  const Micros since_persisted = snapshots_ % costs_.persist_every;
  if (since_persisted < cycles) durable_work_ = std::max(durable_work_, newest_work - since_persisted * tau);
  replicated_work_ = std::max(replicated_work_, newest_work);
}

}  // namespace ctwin
