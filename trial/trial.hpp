#pragma once
//! One trial of a training run, as an engine-neutral state machine.
//!
//! It reacts to two inputs, a fault strike and its own timer, and says when it next needs the
//! timer; the driver merges the fault timeline with the timer. What a checkpoint transfer costs in
//! the trial's state (who moves, which spines are out, training beside a persist) it asks its
//! engine's physics (trial/physics.hpp) each time that state changes. Between events, compute
//! spans and checkpoint saves are folded into arithmetic: a 54-day run costs a few thousand
//! events, not millions.
//!
//! The model (docs/model.md): the job runs compute intervals of `interval` work, each followed by
//! a blocking save; a crash or hang loses the work since the last completed save, then the job goes
//! through detection, diagnosis, waiting for spares (only when a node must be replaced and the
//! pool is empty), restart (the longest pending action + the restart overhead) and restore. A fault
//! during any of these starts the chain again. Slow faults run the job at the slowest speed factor.

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <vector>

#include "core/invariant.hpp"
#include "core/ledger.hpp"
#include "core/rng.hpp"
#include "models/fault_timeline.hpp"
#include "models/scenario.hpp"
#include "policies/controller.hpp"
#include "policies/restart_path.hpp"
#include "trial/flash_tiers.hpp"
#include "trial/node_pool.hpp"
#include "trial/ordered_node_set.hpp"
#include "trial/part_history.hpp"
#include "trial/timed_list.hpp"
#include "trial/trial_config.hpp"
#include "trial/trial_observer.hpp"

namespace ctwin {

struct TrialResult {
  std::uint64_t seed = 0;
  Ledger ledger;
  Micros wall_us = 0;
  bool finished_work = false;  //!< the work was done (always true for a horizon run that reached its end)
  std::int64_t checkpoints = 0;
  std::int64_t interruptions = 0;          //!< the job (or its recovery) stopped and had to restart
  std::vector<std::int64_t> fault_counts;  //!< per fault class, faults that struck the job
  std::vector<std::int64_t> interruptions_by_class;  //!< per fault class, the interruptions it caused
};

//! Productive time over wall time (ETTR).
inline double goodput(const TrialResult& t) {
  return t.wall_us > 0 ? static_cast<double>(t.ledger[Category::Productive]) / static_cast<double>(t.wall_us) : 0.0;
}

class Trial {
 public:
  Trial(const TrialConfig& config, std::uint64_t seed, TrialObserver* observer = nullptr);
  Trial(const Trial&) = delete;  //!< its lists point at its own timer cache
  Trial& operator=(const Trial&) = delete;

  Micros next_timer() const;
  void on_timer(Micros now);
  void on_fault(const FaultStrike& strike);
  bool done() const { return phase_ == Phase::Done; }
  const TrialResult& result() const { return result_; }
  //! Physical node in a job slot, or -1 while the slot waits for a spare.
  int node_in_slot(int slot) const { return pool_.node_in_slot(slot); }
  //! The node a node or GPU fault strikes now (a lemon's fault names its node), or -1 if none.
  int victim_of(const FaultStrike& strike) const {
    if (strike.node < 0) return node_in_slot(strike.slot);
    return pool_.in_job(strike.node) ? strike.node : -1;
  }

 private:
  enum class Phase { Up, Detect, FailureSave, Diagnose, WaitSpare, Restart, Restore, PlannedSave, Maintenance, Done };
  //! Why the job saves and stops while healthy: maintenance, evicting a straggler, regrowing.
  enum class PlannedStop { Maintenance, Evict, Regrow };
  struct SlowEpisode {
    Micros end;
    int node;  //!< -1 for a network part
    double factor;
    bool spine = false;  //!< a spine out: every leaf group's uplinks are narrower
    int rail_nodes = 0;  //!< the job's nodes that lost a rail to it: their storage link is narrower
    bool rail_leaf = false;  //!< a rail leaf out: its group's uplinks are narrower
  };
  //! A node that must leave the job when the diagnosis completes, and when it may come back.
  struct Departure {
    int slot;
    int node;
    Micros back;     //!< kNever: through the repair shop
    Micros swap_us;  //!< putting a cold spare in its place
  };
  //! A misdiagnosed fault: the bad part stayed in the job and fails again.
  struct Recurrence {
    Micros at;
    std::uint32_t fault_class;
    int node, gpu;
  };
  //! Silent corruption waiting to be noticed; the work up to `clean_work` was saved before it.
  struct PendingSdc {
    Micros detect_at;
    Micros clean_work;
    std::uint32_t fault_class;
    int slot, node, gpu;
  };

  // Up phase arithmetic.
  Micros wall_for_work(Micros work) const;
  Micros work_in_wall(Micros wall) const;
  void advance_up(Micros t);
  Micros up_completion_time() const;
  void commit();
  void finish(Micros t, bool work_done);
  //! Invariants (core/invariant.hpp): inputs in time order, and the ledger's sum is the wall.
  void arrived(Micros t) {
    CTWIN_INVARIANT_DETAIL(t >= last_input_, "a trial's inputs (faults, its timer) come in time order",
                           std::to_string(t) + " us after " + std::to_string(last_input_) + " us");
    last_input_ = t;
  }
  void check_ledger() const;

  // Down phases.
  void enter(Phase phase, Micros t, Micros duration);
  void advance_down(Micros t);
  void leave_diagnosis(Micros t);
  //! The nodes the diagnosis sent away leave their slots: for repair, or with their network part.
  void send_away_departures(Micros t);
  void fill_vacancies(Micros t);
  void begin_restart(Micros t);
  Category phase_category() const;

  void update_speed();
  //! What a save, a persist and a storage restore cost in the state the job is in now (physics).
  void update_transfer_costs();
  int active_nodes() const { return std::min(config_.job_nodes, active_replicas_ * replica_nodes_); }
  TransferQuestion fabric_question(Transfer what, int movers, bool contention) const;
  Micros storage_restore_us(int readers) const;
  //! Restoring the lost nodes' shards from their peers' memory.
  Micros peer_restore_us(int readers) const;
  //! The blocking save a failure or a planned stop makes: the sync save, or the flash snapshot.
  Micros blocking_save_us() const { return config_.mechanism == CheckpointMechanism::Sync ? save_us_ : config_.save_us; }
  //! `action`: the remediation the fault got (stop_part's), which with `host_down` says whether
  //! in-process restart can take it (policies/restart_path.hpp).
  void crash(Micros t, const FaultClass& fc, Act action, Micros detection_us, bool host_down, int nodes_lost = 1);
  //! The newest checkpoint a restart can use at t, and where it comes from.
  struct UsableCheckpoint {
    Micros work;
    Micros local_restore_us;  //!< from memory or a peer (-1: none)
    int storage_readers;      //!< nodes reading it from storage (0: none)
  };
  UsableCheckpoint usable_checkpoint(Micros t, bool host_down, int nodes_lost);
  //! What stopping the part that failed did: the remediation, and whether its node went down
  //! (reboot, replacement: its memory is gone).
  struct Stopped {
    bool host_down;
    Act action;
  };
  Stopped stop_part(Micros t, const FaultClass& fc, int slot, int node, int gpu);
  void detect_sdc(const PendingSdc& sdc);
  void begin_maintenance(Micros t);
  void begin_planned_stop(Micros t, PlannedStop kind, Micros save);
  void end_planned_save(Micros end);

  // The controller's decision points (trial_control.cpp).
  control::ClusterView view(Micros t) const;
  Micros remaining_wall(Micros t) const;
  const std::vector<control::Action>& consult(const control::Event& event, Micros t, double restart_cost_s = -1);
  void consult_fault(Micros t, const FaultClass& fc, int node, int gpu, Act& action, Micros& action_us);
  void begin_diagnosis(Micros t);
  void run_precheck(Micros t);
  void consult_shortage(Micros t);
  //! The spare pool changed: a top-up to order, repairs to expedite (policies/spare_pool.hpp).
  void consult_pool(Micros t);
  bool consult_grow(Micros t, double restart_cost_s);
  void check_stragglers(Micros t);
  void evict(Micros t, int node);
  void shrink(Micros t, int replicas);
  void grow(Micros t, int replicas);
  //! Splits compute time that did no work between slow parts (degraded) and missing replicas (shrunk).
  void account_drag(Micros wall, Micros work, Micros times = 1);
  bool on_network_fault(const FaultStrike& strike, const FaultClass& fc);
  Micros repair_turnaround(int node, Micros t, bool& retired);
  //! Events cost nothing without an observer (the native driver's Monte Carlo).
  void emit(Micros t, EventKind kind, int node = -1, int gpu = -1, const FaultClass* fc = nullptr, double speed = 1.0,
            int component = -1) {
    if (observer_) notify(t, kind, node, gpu, fc, speed, component);
  }
  void notify(Micros t, EventKind kind, int node, int gpu, const FaultClass* fc, double speed, int component);

  const TrialConfig& config_;
  TrialObserver* observer_;
  TrialResult result_;
  Phase phase_ = Phase::Up;
  Micros now_ = 0;
  Micros last_input_ = 0;  //!< the time of the latest fault or timer

  // Up state: position within the compute/save cycle.
  bool in_save_ = false;
  Micros save_left_ = 0;
  Micros uncommitted_ = 0;  //!< work since the last completed save: lost on a crash
  Micros committed_ = 0;
  double speed_ = 1.0;       //!< slow_speed_ x share_
  double slow_speed_ = 1.0;  //!< the slowest part in the job
  double share_ = 1.0;       //!< active / total replicas
  Micros interval_ = 0;  //!< in force since the last (re)start
  Micros save_us_ = 0;   //!< the blocking save now (flash: the snapshot and its share of the persist's drag on training)
  //! The last questions asked of the physics, so an unchanged state asks nothing (the hot path).
  TransferQuestion priced_save_{Transfer::Save, -1};
  //! A restore's price, asked again only when its readers or the fabric's state change.
  struct PricedRead {
    TransferQuestion asked{Transfer::Restore, -1};
    Micros cost_us = 0;
    Micros us(const Trial& trial, Transfer what, int readers);
  };
  mutable PricedRead priced_restore_, priced_peer_restore_;  //!< from storage, from peers
  void choose_interval(Micros t);

  FlashTiers flash_;  //!< flash checkpoints: which snapshot is safe in storage, which in a peer's memory
  Micros failure_save_work_ = 0;  //!< save-on-failure: the live work being saved
  Micros chain_restore_us_ = -1;  //!< the local (memory, peer) restore the current recovery needs (-1: none)
  int chain_storage_readers_ = 0; //!< nodes the current recovery restores from storage
  bool chain_in_process_ = true;  //!< every fault of the current recovery is one in-process restart takes

  // Down state.
  Micros phase_start_ = 0;
  Micros phase_end_ = kNever;
  Micros pending_diagnosis_us_ = 0;
  Micros pending_action_us_ = 0;
  std::vector<Departure> departures_;       //!< leave the job when the diagnosis completes
  //! By node: it has a departure waiting in departures_. A node struck again while the diagnosis
  //! runs (one that never ends, at a million GPUs) adds nothing: the first wins (the node holds the
  //! same slot until they are sent away). A bit a node: the whole fleet's stays in cache.
  std::vector<bool> departing_;
  void depart(const Departure& d) {
    const auto n = static_cast<std::size_t>(d.node);
    if (n >= departing_.size()) departing_.resize(std::max(n + 1, 2 * departing_.size()), false);
    if (departing_[n]) return;
    departing_[n] = true;
    departures_.push_back(d);
  }
  OrderedNodeSet rebooting_;  //!< back up when the restart completes, in the order they went down

  // Nodes.
  NodePool pool_;  //!< slots, vacancies, spares, returns, failure history
  TimedList<Recurrence, &Recurrence::at> recurrences_;
  std::vector<int> cured_;  //!< nodes a repair mended for good: their lemon faults no longer strike
  //! ECC row remaps: pending ones (part, the double-bit error's class) until the GPU's next reset,
  //! and the spare rows each GPU has used (part = node * 256 + GPU). Short lists, scanned.
  std::vector<std::pair<std::int64_t, std::uint32_t>> remaps_pending_;
  std::vector<std::pair<std::int64_t, int>> rows_used_;
  std::vector<std::pair<std::int64_t, int>> correctable_;  //!< correctable errors seen per GPU part
  void request_remap(std::int64_t part, const FaultClass& fc);
  //! Applies the remaps pending on the GPUs a reset clears; true when one fails (Xid 64: RMA).
  bool apply_remaps(Micros t, int node, int gpu, bool whole_node, Micros& replace_us);
  Rng shop_rng_;  //!< repair times, repair failures, misdiagnosis: its own stream, apart from the faults'
  std::vector<SlowEpisode> slow_;
  Micros slow_next_end_ = kNever;  //!< the earliest end in slow_: the timer reads it at every event
  void add_slow(const SlowEpisode& e) {
    slow_.push_back(e);
    slow_next_end_ = std::min(slow_next_end_, e.end);
    aux_dirty_ = true;
  }
  //! After episodes leave slow_.
  void refresh_slow_next_end() {
    aux_dirty_ = true;
    slow_next_end_ = kNever;
    for (const auto& e : slow_) slow_next_end_ = std::min(slow_next_end_, e.end);
  }
  TimedList<PendingSdc, &PendingSdc::detect_at> sdc_;
  Micros next_maintenance_ = kNever;
  //! The earliest of the timed lists and the slow episodes' ends, recomputed only after one changed
  //! (they change at a few events in a hundred; next_timer is asked at every one).
  mutable bool aux_dirty_ = true;
  mutable Micros aux_next_ = kNever;
  PlannedStop planned_ = PlannedStop::Maintenance;

  // Controller state: replicas, a precheck scheduled in this diagnosis, straggler checks due.
  int replica_nodes_ = 1;
  int total_replicas_ = 1;
  int active_replicas_ = 1;
  int grow_by_ = 0;
  int spares_added_ = 0;             //!< nodes top-ups ordered for the pool, arrived or not
  int spares_arriving_ = 0;          //!< of those, on their way (one order at a time)
  Micros top_up_due_ = kNever;       //!< when they land
  bool precheck_pending_ = false;
  struct StragglerCheck {
    Micros at;
    int node;
  };
  TimedList<StragglerCheck, &StragglerCheck::at> straggler_checks_;
  Rng control_rng_;  //!< precheck and step-time noise: its own stream, so policies compare on common faults
  std::vector<control::Action> actions_;

  // Quorum (trial_quorum.cpp; policies.elastic mode quorum, as torchft): a replica that fails steps
  // out and heals while the others train on; it rejoins with a peer's live state, no rollback.
  enum class ReplicaState : std::uint8_t { In, Healing, WaitingForSpare };
  std::vector<ReplicaState> replica_state_;      //!< per replica
  //! The replicas that may wait for a spare, in order (stale entries are dropped when scanned): a
  //! return scans these, not every replica (125,000 at a million GPUs of one-node replicas).
  std::set<int> waiting_for_spare_;
  struct Rejoin {
    Micros at;
    int replica;
  };
  TimedList<Rejoin, &Rejoin::at> rejoins_;  //!< the healing replicas, few
  bool regrouping_ = false;  //!< the healthy replicas' stall: detection, then the reform (Detect, Restart phases)
  int replica_of(int slot) const { return slot / replica_nodes_; }
  //! A crash or hang on `slot` the quorum absorbs: a healthy replica is left to train on.
  bool quorum_absorbs(int slot) const;
  void regroup(Micros t, const FaultClass& fc, const Stopped& stopped, int slot);
  //! The replica steps out; it rejoins at `back` (kNever: when a spare fills its vacant slot).
  void step_out(Micros t, int replica, Micros back);
  void rejoin_due(Micros t);
  //! Replicas whose vacant slots are filled now start healing; a full recovery's vacancies set theirs out.
  void quorum_vacancies(Micros t, Micros swap_us);
  //! The restart and recovery of one healed replica after its hardware action (`ready`).
  Micros replica_back(Micros ready, const FaultClass* fc, Act action) const;
  //! Per fault class (with an escalation): each part's newest `after` faults; a part is node * 256 + GPU.
  std::vector<PartHistory> recent_faults_;
};

}  // namespace ctwin
