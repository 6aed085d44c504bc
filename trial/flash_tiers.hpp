#pragma once
//! Flash checkpoints beyond the blocking snapshot: which snapshot is safe where. Every K-th
//! snapshot is persisted to storage in the background, one persist at a time: a snapshot due
//! while one is running waits, and a newer one replaces it, as a real persister skips to the
//! newest snapshot (live/checkpoint's does). Each snapshot may also be copied to a peer's memory.
//! A crash that takes a node's memory loses the persist in flight and falls back to the newest
//! snapshot that reached a peer or storage. Work is counted in integer microseconds of
//! failure-free compute, as the trial keeps it.

#include <cstdint>
#include <deque>
#include <utility>

#include "core/units.hpp"

namespace ctwin {

class FlashTiers {
 public:
  struct Costs {
    int persist_every = 1;
    Micros persist_us = 0;
    bool peer_replicas = false;
    Micros replication_us = 0;
  };
  explicit FlashTiers(const Costs& costs) : costs_(costs) {}
  //! The state changed what a persist costs: persists from now on take this long.
  void set_persist_us(Micros persist_us) { costs_.persist_us = persist_us; }
  //! Likewise for a snapshot's copy to a peer.
  void set_replication_us(Micros replication_us) { costs_.replication_us = replication_us; }

  //! A snapshot of `work` completed at `end`: its persist (one in K: now, or after the one in
  //! flight, replacing any that waited) and its replica.
  void record(Micros end, Micros work);
  //! Persists and replicas done by `t` make their snapshots safe.
  void settle(Micros t);
  //! A node's memory is gone: the persist in flight and the one waiting never land.
  void lose_in_flight();
  //! Whether whole compute+save cycles of `cycle` each may be folded into arithmetic: only when
  //! every persist and replica ends before the next starts (else they queue, cycle by cycle).
  bool foldable(Micros cycle) const {
    return costs_.persist_us <= costs_.persist_every * cycle && costs_.replication_us <= cycle;
  }
  //! `cycles` snapshots folded into arithmetic, each `tau` of work apart, the last holding
  //! `newest_work`: what was in flight lands, and the newest persisted one among them is durable.
  void fold(Micros cycles, Micros tau, Micros newest_work);

  Micros durable() const { return durable_work_; }
  Micros replicated() const { return replicated_work_; }

 private:
  Costs costs_;
  std::int64_t snapshots_ = 0;
  Micros durable_work_ = 0;     //!< newest snapshot safe in storage
  Micros replicated_work_ = 0;  //!< newest snapshot safe in a peer's memory
  struct Persist {
    Micros work = -1;     //!< < 0: none
    Micros done_at = 0;
  };
  Persist persisting_;        //!< the persist in flight
  Micros waiting_work_ = -1;  //!< the newest snapshot due for a persist while one runs (< 0: none)
  //! Replicas in flight: (work, ready at), oldest first.
  std::deque<std::pair<Micros, Micros>> replicating_;
};

}  // namespace ctwin
