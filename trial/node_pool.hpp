#pragma once
//! Who is where in a trial: the node in each job slot, the slots waiting for a spare, the spare
//! pool, the nodes on their way back (from the repair shop, with a replaced network part, or ordered
//! for the pool), and each node's recent failures (for retirement). Nodes are numbered job nodes
//! first, then spares, then nodes a top-up added.
//! Every slot holds at most one node and every node at most one slot (asserted in debug builds).

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "core/units.hpp"
#include "trial/return_queue.hpp"

namespace ctwin {

class NodePool {
 public:
  struct Vacancy {
    int slot;
    Micros swap_us;  //!< putting a cold spare in its place
  };

  //! Slot i holds node i; the spares wait in the pool. `retire_after` > 0 keeps that many
  //! failure times per node.
  NodePool(int job_nodes, int spare_nodes, int retire_after);

  //! The node in `slot`, or -1 while it waits for a spare.
  int node_in_slot(int slot) const { return slot_node_[static_cast<std::size_t>(slot)]; }
  //! The slot `node` holds, or -1 when it is not in the job.
  int slot_of(int node) const { return node_slot_[static_cast<std::size_t>(node)]; }
  bool in_job(int node) const { return slot_of(node) >= 0; }

  std::size_t vacancies() const { return vacant_slots_.size(); }
  //! `f(slot)` for each slot waiting for a spare.
  template <class F>
  void for_each_vacancy(F&& f) const {
    for (const Vacancy& v : vacant_slots_) f(v.slot);
  }
  std::size_t spares() const { return spare_pool_.size(); }

  //! `node` leaves `slot`; a spare takes its place in `swap_us` (or a hot one sooner).
  void vacate(int slot, int node, Micros swap_us);
  //! A slot that a spare must fill, with no node to take out (a replica added back).
  void add_vacancy(int slot) { vacant_slots_.push_back({slot, 0}); }
  //! Spares take the vacant slots in order; the first `hot_count` of them (those kept warm) swap in
  //! in `hot_swap_us`. `assigned(node, swap_us)` for each.
  template <class Assigned>
  void fill(int hot_count, Micros hot_swap_us, Assigned&& assigned);
  //! Slots `first` .. `end - 1` leave the job (a shrink): their nodes wait in the pool, warm, and
  //! their vacancies are dropped.
  void release_slots(int first, int end);

  //! `node` comes back to the pool at `at`; `repair`: from the repair shop (it may be expedited).
  void schedule_return(Micros at, int node, bool repair = false) { returns_.push(at, node, repair); }
  Micros next_return() const { return returns_.next(); }
  //! Every node in the repair shop is back by `by` at the latest.
  void expedite_repairs(Micros by) { returns_.expedite_repairs(by); }
  //! A node new to the fleet (a top-up's), in no slot and not yet in the pool: its number.
  int add_node();
  //! Nodes back by `t` join the pool, in order of return; `returned(node)` for each. Whether any did.
  template <class Returned>
  bool take_returns(Micros t, Returned&& returned);
  //! A spare whose network part is down leaves the pool until `back`; false when it is not there.
  bool hold_spare(int node, Micros back);

  void record_failure(int node, Micros t);
  //! Whether `node`'s last `retire_after` failures all fall after `since` (it is retired).
  bool failed_too_often(int node, Micros since) const;

 private:
  std::vector<int> slot_node_;
  std::vector<int> node_slot_;
  std::deque<Vacancy> vacant_slots_;
  std::deque<int> spare_pool_;
  ReturnQueue returns_;
  //! The last `retire_after_` failure times of each node, a ring per node in one array.
  std::size_t retire_after_ = 0;
  std::vector<Micros> node_failures_;
  std::vector<std::uint16_t> node_failure_count_;
};

template <class Assigned>
void NodePool::fill(int hot_count, Micros hot_swap_us, Assigned&& assigned) {
  int warm = std::min(hot_count, static_cast<int>(spare_pool_.size()));
  while (!vacant_slots_.empty() && !spare_pool_.empty()) {
    const Vacancy vacancy = vacant_slots_.front();
    const int node = spare_pool_.front();
    vacant_slots_.pop_front();
    spare_pool_.pop_front();
    slot_node_[static_cast<std::size_t>(vacancy.slot)] = node;
    node_slot_[static_cast<std::size_t>(node)] = vacancy.slot;
    assigned(node, warm-- > 0 ? hot_swap_us : vacancy.swap_us);
  }
}

template <class Returned>
bool NodePool::take_returns(Micros t, Returned&& returned) {
  return returns_.take(t, [&](int node) {
    spare_pool_.push_back(node);
    returned(node);
  });
}

}  // namespace ctwin
