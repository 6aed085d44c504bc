// Faults as they strike: what each effect does to the job (crash, hang, slow, flap, silent
// corruption, counted only), and the crash that starts the recovery chain. Who is in the job is in
// trial_nodes.cpp, the recovery chain and time in trial.cpp, the quorum in trial_quorum.cpp.
#include <algorithm>

#include "trial/trial.hpp"

namespace ctwin {

void Trial::detect_sdc(const PendingSdc& sdc) {
  const Micros t = sdc.detect_at;
  const FaultClass& fc = config_.faults[sdc.fault_class];
  // Every checkpoint saved after the corruption is bad: back to the last clean one.
  const Micros rolled_back = committed_ - std::min(committed_, sdc.clean_work);
  result_.ledger[Category::Productive] -= rolled_back;
  result_.ledger[Category::LostProgress] += rolled_back;
  committed_ -= rolled_back;
  emit(t, EventKind::Rollback, sdc.node, sdc.gpu, &fc);
  const Stopped stopped = pool_.node_in_slot(sdc.slot) == sdc.node ? stop_part(t, fc, sdc.slot, sdc.node, sdc.gpu) : Stopped{false, fc.action};
  crash(t, fc, stopped.action, 0, stopped.host_down);  // the time until it was noticed is already lost work
}

void Trial::on_fault(const FaultStrike& strike) {
  if (phase_ == Phase::Done) return;
  const Micros t = strike.time;
  arrived(t);
  if (phase_ == Phase::Up) {
    advance_up(t);
    if (phase_ == Phase::Done) return;
  }
  now_ = std::max(now_, t);
  const FaultClass& fc = config_.faults[strike.fault_class];
  // A lemon's extra fault (it names its node) after a repair that cured it: the node is sound now.
  if (strike.node >= 0 && std::find(cured_.begin(), cured_.end(), strike.node) != cured_.end()) return;
  // A model without faults during recovery (Young's, the classic renewal formula) drops them.
  if (!config_.faults_during_recovery && phase_ != Phase::Up && phase_ != Phase::PlannedSave && phase_ != Phase::Maintenance) return;
  if (is_network(fc.rate.component)) {
    if (on_network_fault(strike, fc)) ++result_.fault_counts[strike.fault_class];
    return;
  }
  // A lemon's extra fault names its node: it matters only while the node is in the job.
  const int slot = strike.node >= 0 ? pool_.slot_of(strike.node) : strike.slot;
  const int node = slot >= 0 ? pool_.node_in_slot(slot) : -1;
  if (node < 0) {
    emit(t, EventKind::FaultIgnored, strike.node, strike.gpu, &fc);
    return;
  }
  ++result_.fault_counts[strike.fault_class];
  emit(t, EventKind::Fault, node, strike.gpu, &fc);
  pool_.record_failure(node, t);

  switch (fc.effect) {
    case Effect::None:  // counted; correctable ECC errors accumulate towards a row remap
      if (fc.remap) request_remap(static_cast<std::int64_t>(node) * 256 + std::max(strike.gpu, 0), fc);
      return;
    case Effect::Slow:
      add_slow({t + fc.detection_us + fc.action_us, node, fc.speed_factor});
      emit(t, EventKind::SlowBegin, node, strike.gpu, &fc, fc.speed_factor);
      update_speed();
      if (config_.controller && config_.straggler_observe_us > 0) straggler_checks_.push({t + config_.straggler_observe_us, node});
      return;
    case Effect::Flap:
      if (fc.action_us < fc.detection_us) {  // back before the watchdog fires: a stall
        add_slow({t + fc.action_us, node, 0.0});
        emit(t, EventKind::SlowBegin, node, strike.gpu, &fc, 0.0);
        update_speed();
      } else {
        if (quorum_absorbs(slot)) regroup(t, fc, {false, fc.action}, slot);
        else crash(t, fc, fc.action, fc.detection_us, false);  // the watchdog fires: a hang
      }
      return;
    case Effect::Sdc: {
      // Nothing shows yet. The last clean checkpoint holds the work saved before now (or being saved).
      const Micros clean = committed_ + (phase_ == Phase::Up && in_save_ ? uncommitted_ : 0);
      sdc_.push({t + fc.detection_us, clean, strike.fault_class, slot, node, strike.gpu});
      return;
    }
    case Effect::Crash:
    case Effect::Hang: {
      const Stopped stopped = stop_part(t, fc, slot, node, strike.gpu);
      if (quorum_absorbs(slot)) regroup(t, fc, stopped, slot);
      else crash(t, fc, stopped.action, fc.detection_us, stopped.host_down);
    }
      return;
  }
}

//! A crash or a hang: the work since the last save is gone, and the recovery chain (re)starts.
void Trial::crash(Micros t, const FaultClass& fc, Act action, Micros detection_us, bool host_down, int nodes_lost) {
  ++result_.interruptions;
  // A quorum's stall is still the job running: its unsaved work is lost now, as from running.
  const bool running = phase_ == Phase::Up || regrouping_;
  regrouping_ = false;
  // A new recovery (from running) may go in-process; one fault in it that cannot sends it all the other way.
  chain_in_process_ = (chain_in_process_ || running) && in_process_takes(config_.restart, fc, action, host_down);
  ++result_.interruptions_by_class[static_cast<std::size_t>(&fc - config_.faults.data())];
  emit(t, EventKind::Interrupted, -1, -1, &fc);
  if (phase_ != Phase::Up) result_.ledger[phase_category()] += t - phase_start_;  // a save, recovery or maintenance cut short
  if (phase_ == Phase::FailureSave) {  // the save on failure did not finish: that work is lost too
    result_.ledger[Category::LostProgress] += failure_save_work_;
    failure_save_work_ = 0;
  }
  if (running || phase_ == Phase::PlannedSave) {
    if (config_.save_on_failure && !host_down && phase_ == Phase::Up) {
      failure_save_work_ = uncommitted_;  // saved after detection, if nothing else strikes first
    } else {
      result_.ledger[Category::LostProgress] += uncommitted_;
    }
    uncommitted_ = 0;
    in_save_ = false;
    save_left_ = 0;
  }
  // The newest checkpoint this crash leaves usable: saved work past it is lost too.
  const auto [usable, local_restore_us, storage_readers] = usable_checkpoint(t, host_down, nodes_lost);
  if (usable < committed_) {
    const Micros rolled_back = committed_ - usable;
    result_.ledger[Category::Productive] -= rolled_back;
    result_.ledger[Category::LostProgress] += rolled_back;
    committed_ = usable;
  }
  // Both may apply: the lost nodes read storage while the others load from memory.
  if (storage_readers > 0) chain_storage_readers_ = std::min(active_nodes(), chain_storage_readers_ + storage_readers);
  chain_restore_us_ = std::max(chain_restore_us_, local_restore_us);
  pending_diagnosis_us_ = std::max(pending_diagnosis_us_, fc.diagnosis_us);
  enter(Phase::Detect, t, detection_us);
  advance_down(t);
}

}  // namespace ctwin
