#include "trial/trial.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "core/invariant.hpp"

namespace ctwin {

Trial::Trial(const TrialConfig& config, std::uint64_t seed, TrialObserver* observer)
    : config_(config),
      observer_(observer),
      flash_({config.persist_every, config.persist_us, config.peer_replicas, config.replication_us}),
      pool_(config.job_nodes, config.spare_nodes, config.shop.retire_after),
      shop_rng_(splitmix64(seed ^ 0x5245504149525348ULL)),
      control_rng_(splitmix64(seed ^ 0x434F4E54524F4C52ULL)) {
  assert((config.interval_us > 0 || config.interval_policy) && "the checkpoint interval must be positive (the loader checks it)");
  result_.seed = seed;
  result_.fault_counts.assign(config.faults.size(), 0);
  result_.interruptions_by_class.assign(config.faults.size(), 0);
  if (config.maintenance) next_maintenance_ = config.maintenance->first_us;
  recurrences_.notify(&aux_dirty_);
  sdc_.notify(&aux_dirty_);
  straggler_checks_.notify(&aux_dirty_);
  rejoins_.notify(&aux_dirty_);
  recent_faults_.reserve(config.faults.size());
  for (const auto& fc : config.faults)
    recent_faults_.emplace_back(fc.escalation ? fc.escalation->after : 1, fc.escalation ? fc.escalation->within_us : 0);
  replica_nodes_ = config.replica_nodes > 0 ? config.replica_nodes : std::max(1, config.job_nodes);
  total_replicas_ = active_replicas_ = std::max(1, config.job_nodes / replica_nodes_);
  if (config.quorum) replica_state_.assign(static_cast<std::size_t>(total_replicas_), ReplicaState::In);
  save_us_ = config.save_us;
  update_transfer_costs();
  choose_interval(0);
  emit(0, EventKind::Running);
}

void Trial::notify(Micros t, EventKind kind, int node, int gpu, const FaultClass* fc, double speed, int component) {
  RunEvent e;
  e.time = t;
  e.node = node;
  e.gpu = gpu;
  e.kind = kind;
  if (fc) {
    e.code = fc->xid.value_or(-1);
    e.fault_class = static_cast<std::int32_t>(fc - config_.faults.data());
  }
  e.speed = speed;
  e.component = component;
  observer_->on_event(e);
}

// ---- Up: compute intervals and blocking saves, folded into arithmetic ---------------------------

//! The interval holds from one (re)start to the next, so the folded arithmetic sees a constant.
void Trial::choose_interval(Micros t) {
  if (!config_.interval_policy) {
    interval_ = config_.interval_us;
    return;
  }
  IntervalContext context{t, result_.interruptions, save_us_, config_.restart_overhead_us + config_.restore_us};
  interval_ = std::max<Micros>(1, config_.interval_policy->interval_us(context));
}

Micros Trial::wall_for_work(Micros work) const {
  if (speed_ >= 1.0) return work;
  if (speed_ <= 0.0) return work == 0 ? 0 : kNever;  // a stall: no work gets done
  return round_micros(std::ceil(static_cast<double>(work) / speed_));  // speed >= kSlowestSpeed: in range
}

Micros Trial::work_in_wall(Micros wall) const {
  return speed_ >= 1.0 ? wall : static_cast<Micros>(std::floor(static_cast<double>(wall) * speed_));
}

void Trial::commit() {
  result_.ledger[Category::Productive] += uncommitted_;
  committed_ += uncommitted_;
  uncommitted_ = 0;
  ++result_.checkpoints;
  if (config_.mechanism == CheckpointMechanism::Flash) flash_.record(now_, committed_);
  if (observer_ && observer_->wants_checkpoints()) emit(now_, EventKind::CheckpointDone);
}

void Trial::advance_up(Micros t) {
  const Micros tau = interval_;
  const bool fold = !(observer_ && observer_->wants_checkpoints());
  auto remaining = [&] { return config_.work_us == kNever ? kNever : config_.work_us - committed_ - uncommitted_; };
  Ledger& ledger = result_.ledger;
  while (now_ < t && phase_ == Phase::Up) {
    if (!in_save_) {
      const Micros goal = std::min(tau - uncommitted_, remaining());
      const Micros need = wall_for_work(goal);
      if (need != kNever && need <= t - now_) {
        account_drag(need, goal);
        uncommitted_ += goal;
        now_ += need;
        if (remaining() == 0) {
          finish(now_, true);
          return;
        }
        in_save_ = true;
        save_left_ = save_us_;
      } else {
        const Micros wall = t - now_;
        const Micros work = std::min(work_in_wall(wall), goal);
        account_drag(wall, work);
        uncommitted_ += work;
        now_ = t;
      }
      continue;
    }
    if (save_left_ > t - now_) {
      ledger[Category::CheckpointSave] += t - now_;
      save_left_ -= t - now_;
      now_ = t;
      continue;
    }
    ledger[Category::CheckpointSave] += save_left_;
    now_ += save_left_;
    save_left_ = 0;
    in_save_ = false;
    commit();
    if (!fold || speed_ <= 0.0) continue;
    // Whole compute+save cycles that end by t; the last cycle of a run given its work goes
    // through the loop above, which notices the work is done.
    const Micros cycle = wall_for_work(tau) + save_us_;
    Micros cycles = (t - now_) / cycle;
    if (config_.work_us != kNever) cycles = std::min(cycles, (remaining() - 1) / tau);
    const bool flash = config_.mechanism == CheckpointMechanism::Flash;
    // Flash: the last K+1 snapshots go through the loop, so their persists are recorded exactly;
    // earlier ones are folded, which is exact when a persist ends before the next one starts.
    if (flash) cycles = std::max<Micros>(0, cycles - (config_.persist_every + 1));
    if (flash && !flash_.foldable(cycle)) cycles = 0;
    if (cycles > 0) {
      ledger[Category::Productive] += cycles * tau;
      account_drag(wall_for_work(tau), tau, cycles);
      ledger[Category::CheckpointSave] += cycles * save_us_;
      committed_ += cycles * tau;
      result_.checkpoints += cycles;
      now_ += cycles * cycle;
      if (flash) flash_.fold(cycles, tau, committed_);  // in flight lands within the K+1 cycles left before t
    }
  }
}

Trial::UsableCheckpoint Trial::usable_checkpoint(Micros t, bool host_down, int nodes_lost) {
  if (config_.mechanism == CheckpointMechanism::Sync) return {committed_, -1, active_nodes()};
  flash_.settle(t);
  // The host stayed up: the newest snapshot is in its shared memory, and its persist goes on.
  if (!host_down) return {committed_, config_.memory_restore_us, 0};
  flash_.lose_in_flight();  // a node's shard of the step in flight never lands
  // A node is gone with its memory: a peer's copy if there is one, else storage.
  if (config_.peer_replicas && flash_.replicated() >= flash_.durable())
    return {std::min(flash_.replicated(), committed_), peer_restore_us(std::min(nodes_lost, active_nodes())), 0};
  // From storage: the nodes that kept the newest snapshot in memory read nothing if storage has
  // it too (they load it from memory meanwhile); an older one takes every node back.
  const bool survivors_hold_it = flash_.durable() >= committed_;
  const int readers = survivors_hold_it ? std::min(nodes_lost, active_nodes()) : active_nodes();
  const Micros survivors_us = survivors_hold_it && readers < active_nodes() ? config_.memory_restore_us : -1;
  return {std::min(flash_.durable(), committed_), survivors_us, readers};
}

//! Spines out, movers on fewer rails (when any of the job's nodes are, one among the movers is
//! assumed) and rail leaves out: what of the fabric's state a transfer's price depends on.
TransferQuestion Trial::fabric_question(Transfer what, int movers, bool contention) const {
  TransferQuestion q{what, std::max(1, movers), 0, contention};
  int rail_nodes = 0;
  for (const auto& e : slow_) {
    q.spines_down += e.spine ? 1 : 0;
    q.rail_leaves_down += e.rail_leaf ? 1 : 0;
    rail_nodes += e.rail_nodes;
  }
  q.degraded_movers = std::min(rail_nodes, q.movers);
  return q;
}

Micros Trial::PricedRead::us(const Trial& trial, Transfer what, int readers) {
  const TransferQuestion now = trial.fabric_question(what, readers, false);
  if (!(now == asked)) {
    asked = now;
    cost_us = trial.config_.physics->cost(now).us;
  }
  return cost_us;
}

Micros Trial::storage_restore_us(int readers) const {
  if (!config_.physics || !config_.physics_restores) return config_.restore_us;
  return priced_restore_.us(*this, Transfer::Restore, readers);
}

//! The lost nodes pull their shards from peers while the others load theirs from memory.
Micros Trial::peer_restore_us(int readers) const {
  if (!config_.physics || !config_.physics_peer_restores) return config_.peer_restore_us;
  return std::max(config_.memory_restore_us, priced_peer_restore_.us(*this, Transfer::PeerRestore, readers));
}

void Trial::update_transfer_costs() {
  if (!config_.physics || !(config_.physics_saves || config_.physics_replicas)) return;
  const TransferQuestion state = fabric_question(Transfer::Save, active_nodes(), false);
  if (state == priced_save_) return;
  priced_save_ = state;
  if (config_.mechanism == CheckpointMechanism::Sync) {
    save_us_ = config_.physics->cost(state).us;
    return;
  }
  auto background = [&](Transfer what) {
    TransferQuestion q = state;
    q.what = what;
    q.contention = config_.contention;
    return config_.physics->cost(q);
  };
  // The training a background transfer costs is charged to the snapshots it serves, evenly: the
  // same total, and whole save cycles stay equal, so they still fold into arithmetic.
  Micros drag_per_snapshot = 0;
  if (config_.physics_saves) {
    const TransferCost persist = background(Transfer::Persist);
    const Micros drag = round_micros((1.0 - persist.training_speed) * static_cast<double>(persist.us));
    drag_per_snapshot += (drag + config_.persist_every - 1) / config_.persist_every;
    flash_.set_persist_us(persist.us);
  }
  if (config_.physics_replicas) {  // every snapshot is replicated
    const TransferCost replica = background(Transfer::Replicate);
    drag_per_snapshot += round_micros((1.0 - replica.training_speed) * static_cast<double>(replica.us));
    flash_.set_replication_us(replica.us);
  }
  save_us_ = config_.save_us + drag_per_snapshot;
}


Micros Trial::up_completion_time() const {
  if (config_.work_us == kNever || speed_ <= 0.0) return kNever;
  const Micros tau = interval_;
  Micros left = config_.work_us - committed_ - uncommitted_;
  Micros t = now_;
  Micros first = std::min(tau - uncommitted_, left);
  if (in_save_) {
    t += save_left_;
    first = std::min(tau, left);
  }
  t += wall_for_work(first);
  left -= first;
  if (left > 0) {
    const Micros cycles = (left + tau - 1) / tau;
    t += cycles * save_us_ + (cycles - 1) * wall_for_work(tau) + wall_for_work(left - (cycles - 1) * tau);
  }
  return t;
}

void Trial::finish(Micros t, bool work_done) {
  // Work not yet saved when the window closes: no fault took it, and a job that goes on keeps it
  // (the default), or only saved work counts (unsaved_work_at_horizon: lost). A run that did its
  // work keeps its last span either way: the final save is not charged.
  const bool window_closed = config_.work_us == kNever || !work_done;  // a horizon, or max_wall
  const Category unsaved = !window_closed || config_.unsaved_work_at_horizon_counts ? Category::Productive : Category::LostProgress;
  if (phase_ == Phase::FailureSave) {  // the window closes while the live state is being saved
    result_.ledger[Category::CheckpointSave] += t - phase_start_;
    result_.ledger[unsaved] += failure_save_work_;
    if (unsaved == Category::Productive) committed_ += failure_save_work_;
    failure_save_work_ = 0;
    phase_ = Phase::Done;
    phase_end_ = kNever;
    now_ = t;
    result_.wall_us = t;
    result_.finished_work = work_done;
    check_ledger();
    emit(t, EventKind::End);
    return;
  }
  if (phase_ == Phase::PlannedSave) {
    result_.ledger[Category::CheckpointSave] += t - phase_start_;
    phase_ = Phase::Up;  // the window closes on unsaved work, which no fault took
  }
  if (phase_ == Phase::Up || regrouping_) {  // a quorum's stall holds its unsaved work too
    result_.ledger[unsaved] += uncommitted_;
    if (unsaved == Category::Productive) committed_ += uncommitted_;
    uncommitted_ = 0;
  }
  if (phase_ != Phase::Up && phase_ != Phase::Done) result_.ledger[phase_category()] += t - phase_start_;
  phase_ = Phase::Done;
  phase_end_ = kNever;
  now_ = t;
  result_.wall_us = t;
  result_.finished_work = work_done;
  check_ledger();
  emit(t, EventKind::End);
}

void Trial::check_ledger() const {
  CTWIN_INVARIANT_DETAIL(result_.ledger.total() == result_.wall_us && result_.wall_us >= last_input_,
                         "a trial's ledger adds up to its wall time, which no input came after",
                         "categories " + std::to_string(result_.ledger.total()) + " us, wall " + std::to_string(result_.wall_us) +
                             " us, last input " + std::to_string(last_input_) + " us");
}

// ---- Down: the recovery chain --------------------------------------------------------------------

Category Trial::phase_category() const {
  switch (phase_) {
    case Phase::Detect: return Category::Detection;
    case Phase::FailureSave: return Category::CheckpointSave;
    case Phase::Diagnose: return Category::Diagnosis;
    case Phase::WaitSpare: return Category::WaitingForSpares;
    case Phase::Restart: return Category::Restart;
    case Phase::Restore: return Category::CheckpointRestore;
    case Phase::PlannedSave: return Category::CheckpointSave;
    case Phase::Maintenance: return Category::PlannedMaintenance;
    default: break;
  }
  assert(false && "phase_category is for the recovery chain");
  return Category::Restart;
}

void Trial::enter(Phase phase, Micros t, Micros duration) {
  phase_ = phase;
  phase_start_ = t;
  phase_end_ = duration == kNever ? kNever : t + duration;
}

void Trial::begin_restart(Micros t) {
  emit(t, EventKind::RestartBegin);
  const RestartPath path = restart_path(config_.restart, chain_in_process_);
  enter(Phase::Restart, t, pending_action_us_ + restart_overhead_us(config_.restart, config_.restart_overhead_us, path));
}

void Trial::advance_down(Micros t) {
  // Up, Done and WaitSpare have no end (phase_end_ is kNever): one compare tells whether one is due.
  while (phase_end_ <= t && phase_end_ != kNever) {
    const Micros end = phase_end_;
    result_.ledger[phase_category()] += end - phase_start_;
    if (regrouping_ && phase_ == Phase::Detect) {  // the quorum's stall: detected, now re-form
      emit(end, EventKind::Detected);
      enter(Phase::Restart, end, config_.quorum_reform_us);
      continue;
    }
    if (regrouping_ && phase_ == Phase::Restart) {  // re-formed: the healthy replicas train on, nothing restored
      regrouping_ = false;
      phase_ = Phase::Up;
      phase_end_ = kNever;
      now_ = end;
      emit(end, EventKind::Running);
      if (next_maintenance_ <= end) begin_maintenance(end);  // it waited for the job to be up
      else advance_up(t);
      continue;
    }
    switch (phase_) {
      case Phase::Detect:
        emit(end, EventKind::Detected);
        if (failure_save_work_ > 0) enter(Phase::FailureSave, end, blocking_save_us());
        else begin_diagnosis(end);
        break;
      case Phase::FailureSave:  // save-on-failure: the live state is safe
        result_.ledger[Category::Productive] += failure_save_work_;
        committed_ += failure_save_work_;
        failure_save_work_ = 0;
        ++result_.checkpoints;
        begin_diagnosis(end);
        break;
      case Phase::Diagnose:
        emit(end, EventKind::Diagnosed);
        leave_diagnosis(end);
        break;
      case Phase::Restart:
        rebooting_.for_each([&](int node) { emit(end, EventKind::NodeUp, node); });
        rebooting_.clear();
        emit(end, EventKind::RestoreBegin);
        // A chain with no crash (maintenance, regrowth) restores from storage, every node.
        if (chain_restore_us_ < 0 && chain_storage_readers_ == 0) chain_storage_readers_ = active_nodes();
        enter(Phase::Restore, end,
              std::max(chain_restore_us_, chain_storage_readers_ > 0 ? storage_restore_us(chain_storage_readers_) : Micros{0}));
        break;
      case Phase::Restore:
        phase_ = Phase::Up;
        phase_end_ = kNever;
        now_ = end;
        in_save_ = false;
        save_left_ = 0;
        uncommitted_ = 0;
        pending_action_us_ = 0;
        pending_diagnosis_us_ = 0;
        chain_restore_us_ = -1;
        chain_storage_readers_ = 0;
        chain_in_process_ = true;
        choose_interval(end);
        emit(end, EventKind::Running);
        if (next_maintenance_ <= end) begin_maintenance(end);  // it waited for the job to be up
        else advance_up(t);
        break;
      case Phase::PlannedSave:
        end_planned_save(end);
        break;
      case Phase::Maintenance:
        begin_restart(end);
        break;
      default: break;
    }
  }
}

void Trial::update_speed() {
  double speed = 1.0;
  for (const auto& e : slow_) speed = std::min(speed, e.factor);
  slow_speed_ = speed;
  share_ = control::replica_speed(config_.speed_by_replicas, active_replicas_, total_replicas_);
  speed_ = slow_speed_ * share_;
  update_transfer_costs();
}

// ---- Inputs ----------------------------------------------------------------------------------------

Micros Trial::next_timer() const {
  if (phase_ == Phase::Done) return kNever;
  if (aux_dirty_) {
    aux_next_ = std::min({recurrences_.next(), sdc_.next(), straggler_checks_.next(), rejoins_.next(), slow_next_end_});
    aux_dirty_ = false;
  }
  Micros t = std::min({config_.end_us, phase_ == Phase::Up ? up_completion_time() : phase_end_, pool_.next_return(), aux_next_});
  if (phase_ == Phase::Up) t = std::min(t, next_maintenance_);
  return t;
}

void Trial::on_timer(Micros t) {
  if (phase_ == Phase::Done) return;
  arrived(t);
  if (phase_ == Phase::Up) {
    advance_up(t);
    if (phase_ == Phase::Done) return;
  }
  now_ = std::max(now_, t);
  // Slow episodes that end now: the time up to t was accounted at the old speed.
  if (slow_next_end_ <= t) {
    for (const auto& e : slow_)
      if (e.end <= t) emit(t, EventKind::SlowEnd, e.node, -1, nullptr, 1.0);
    slow_.erase(std::remove_if(slow_.begin(), slow_.end(), [t](const SlowEpisode& e) { return e.end <= t; }),
                slow_.end());
    refresh_slow_next_end();
    update_speed();
  }
  // Repaired nodes come back to the pool and fill the job's vacant slots; a top-up's land with them.
  if (top_up_due_ <= t) {
    top_up_due_ = kNever;
    spares_arriving_ = 0;
  }
  if (!rejoins_.empty()) rejoin_due(t);
  if (pool_.take_returns(t, [&](int node) { emit(t, EventKind::NodeUp, node); })) {
    const Micros chain_action_us = pending_action_us_;
    fill_vacancies(t);
    if (config_.quorum) {  // a spare for a replica that waits: it heals apart while the others run
      const Micros swap_us = pending_action_us_;
      if (phase_ == Phase::Up || regrouping_) pending_action_us_ = chain_action_us;
      quorum_vacancies(t, swap_us);
      rejoin_due(t);
    }
    if (phase_ == Phase::WaitSpare && (pool_.vacancies() == 0 || (config_.quorum && active_replicas_ > 0))) {
      result_.ledger[Category::WaitingForSpares] += t - phase_start_;
      begin_restart(t);
    } else if (!config_.quorum && phase_ == Phase::Up && active_replicas_ < total_replicas_ &&
               consult_grow(t, micros_to_seconds(save_us_ + config_.restart_overhead_us + config_.restore_us))) {
      begin_planned_stop(t, PlannedStop::Regrow, in_save_ ? save_left_ : blocking_save_us());
    }
  }
  if (!straggler_checks_.empty()) check_stragglers(t);
  // Silent corruption noticed now (in strike order).
  while (const auto sdc = sdc_.take_due(t)) detect_sdc(*sdc);
  // Misdiagnosed faults strike again, if the bad node is still in the job.
  while (const auto due = recurrences_.take_due(t)) {
    const Recurrence& again = *due;
    const int slot = pool_.slot_of(again.node);
    if (slot >= 0 && phase_ != Phase::Done) on_fault({again.at, again.fault_class, slot, again.gpu, -1});
  }
  if (phase_ == Phase::Up && next_maintenance_ <= t) begin_maintenance(t);
  advance_down(t);
  if (phase_ != Phase::Done && t >= config_.end_us) finish(t, config_.work_us == kNever);
}

void Trial::begin_maintenance(Micros t) {
  while (next_maintenance_ <= t) next_maintenance_ += config_.maintenance->interval_us;
  // The job saves first (finishing a save in progress), so maintenance loses no work.
  begin_planned_stop(t, PlannedStop::Maintenance, in_save_ ? save_left_ : blocking_save_us());
}

//! The job saves and stops on purpose; what follows the save depends on why (end_planned_save).
void Trial::begin_planned_stop(Micros t, PlannedStop kind, Micros save) {
  planned_ = kind;
  chain_in_process_ = false;  // new processes or new members: the job relaunches
  in_save_ = false;
  save_left_ = 0;
  enter(Phase::PlannedSave, t, save);
  advance_down(t);
}

void Trial::end_planned_save(Micros end) {
  now_ = end;
  commit();
  switch (planned_) {
    case PlannedStop::Maintenance:
      emit(end, EventKind::MaintenanceBegin);
      enter(Phase::Maintenance, end, config_.maintenance->duration_us);
      return;
    case PlannedStop::Evict:  // the evicted node leaves; a spare takes its place, or the job shrinks or waits
      leave_diagnosis(end);
      return;
    case PlannedStop::Regrow:
      grow(end, grow_by_);
      begin_restart(end);
      return;
  }
}

}  // namespace ctwin
