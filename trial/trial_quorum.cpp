// Quorum (policies.elastic mode quorum, as torchft): a replica whose node crashes or hangs steps
// out; the healthy replicas stall until the fault is detected, re-form without it (`reform`) and
// train on at reduced data parallelism (the missing share is `shrunk`), losing only the step in
// flight: no rollback. The failed replica heals apart (its hardware action, its restart by the
// scenario's mechanism, a peer's live state copied over: `recover`) and rejoins without stopping
// the others. The last replica standing, silent corruption and network parts take the full
// recovery (trial.cpp), after which replicas still healing stay out.
#include <algorithm>

#include "trial/trial.hpp"

namespace ctwin {

bool Trial::quorum_absorbs(int slot) const {
  if (!config_.quorum || (phase_ != Phase::Up && !regrouping_)) return false;
  // A replica already out heals on; otherwise one in the job must be left to train.
  return replica_state_[static_cast<std::size_t>(replica_of(slot))] != ReplicaState::In || active_replicas_ >= 2;
}

Micros Trial::replica_back(Micros ready, const FaultClass* fc, Act action) const {
  const bool in_process = fc && in_process_takes(config_.restart, *fc, action, false);
  const RestartPath path = restart_path(config_.restart, in_process);
  return ready + restart_overhead_us(config_.restart, config_.restart_overhead_us, path) + config_.quorum_recover_us;
}

void Trial::regroup(Micros t, const FaultClass& fc, const Stopped& stopped, int slot) {
  const int replica = replica_of(slot);
  const bool was_in = replica_state_[static_cast<std::size_t>(replica)] == ReplicaState::In;
  if (was_in) {  // the healthy replicas notice; a strike on a replica healing touches no one else
    ++result_.interruptions;
    ++result_.interruptions_by_class[static_cast<std::size_t>(&fc - config_.faults.data())];
    emit(t, EventKind::Interrupted, -1, -1, &fc);
  }
  // The node's own fate: its action (reset, reboot) heals with it; a node sent away leaves now.
  const Micros action_us = pending_action_us_;
  pending_action_us_ = 0;
  rebooting_.clear();  // the quorum's reboots end with their replica's rejoin (only a full recovery keeps a list)
  send_away_departures(t);
  fill_vacancies(t);
  const Micros swap_us = pending_action_us_;
  pending_action_us_ = 0;
  const Micros ready = t + fc.detection_us + fc.diagnosis_us + std::max(action_us, swap_us);
  rejoins_.erase_if([replica](const Rejoin& r) { return r.replica == replica; });
  if (was_in) step_out(t, replica, kNever);
  replica_state_[static_cast<std::size_t>(replica)] = ReplicaState::Healing;
  rejoins_.push({replica_back(ready, &fc, stopped.action), replica});
  quorum_vacancies(t, swap_us);  // the slots a misdiagnosis or a replacement left empty
  if (!was_in) return;
  // The healthy replicas: the step in flight is lost, they wait to detect the fault, then re-form.
  if (regrouping_) result_.ledger[phase_category()] += t - phase_start_;  // a stall cut short by another
  const Micros in_flight = std::min(uncommitted_, config_.step_us);
  uncommitted_ -= in_flight;
  result_.ledger[Category::LostProgress] += in_flight;
  regrouping_ = true;
  enter(Phase::Detect, t, fc.detection_us);
  advance_down(t);
}

void Trial::step_out(Micros t, int replica, Micros back) {
  auto& state = replica_state_[static_cast<std::size_t>(replica)];
  if (state == ReplicaState::In) {
    --active_replicas_;
    update_speed();
    emit(t, EventKind::Shrunk, -1, -1, nullptr, share_, active_replicas_);
  }
  state = back == kNever ? ReplicaState::WaitingForSpare : ReplicaState::Healing;
  if (back != kNever) rejoins_.push({back, replica});
  else waiting_for_spare_.insert(replica);
}

void Trial::rejoin_due(Micros t) {
  bool any = false;
  while (const auto due = rejoins_.take_due(t)) {
    replica_state_[static_cast<std::size_t>(due->replica)] = ReplicaState::In;
    ++active_replicas_;
    any = true;
  }
  if (!any) return;
  if (phase_ == Phase::Up) advance_up(t);  // the time up to t at the old width
  update_speed();
  emit(t, EventKind::Grown, -1, -1, nullptr, share_, active_replicas_);
}

void Trial::quorum_vacancies(Micros t, Micros swap_us) {
  pool_.for_each_vacancy([&](int slot) {
    const int replica = replica_of(slot);
    auto& state = replica_state_[static_cast<std::size_t>(replica)];
    if (state == ReplicaState::WaitingForSpare) return;
    rejoins_.erase_if([replica](const Rejoin& r) { return r.replica == replica; });
    if (state == ReplicaState::In) step_out(t, replica, kNever);
    state = ReplicaState::WaitingForSpare;
    waiting_for_spare_.insert(replica);
  });
  // Waiting replicas whose slots are all filled: healing now (their restart and a peer's state),
  // or, in a full recovery, back with it.
  // In replica order, as a scan of every replica would: the rejoins are pushed in the same order.
  for (auto it = waiting_for_spare_.begin(); it != waiting_for_spare_.end();) {
    const int replica = *it;
    auto& state = replica_state_[static_cast<std::size_t>(replica)];
    bool whole = state == ReplicaState::WaitingForSpare;  // else healing already (regroup): dropped
    for (int slot = replica * replica_nodes_; slot < (replica + 1) * replica_nodes_ && whole; ++slot) whole = pool_.node_in_slot(slot) >= 0;
    if (state == ReplicaState::WaitingForSpare && !whole) {
      ++it;
      continue;
    }
    it = waiting_for_spare_.erase(it);
    if (state != ReplicaState::WaitingForSpare) continue;
    state = ReplicaState::Healing;
    rejoins_.push({phase_ == Phase::Up || regrouping_ ? replica_back(t + swap_us, nullptr, Act::Replace) : t, replica});
  }
}

}  // namespace ctwin
