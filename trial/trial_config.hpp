#pragma once
//! What one trial needs (TrialConfig), resolved from a scenario: checkpoint costs (given, or from
//! the physical model), the checkpoint policy's interval, the controller, where the run ends.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/network_domains.hpp"
#include "models/scenario.hpp"
#include "policies/checkpoint_policy.hpp"
#include "policies/controller.hpp"
#include "trial/physics.hpp"

namespace ctwin {

//! Everything a trial needs, resolved from the scenario and the cost model.
struct TrialConfig {
  int job_nodes = 0;
  int spare_nodes = 0;
  std::vector<FaultClass> faults;
  Micros save_us = 0;
  Micros restore_us = 0;
  Micros restart_overhead_us = 0;  //!< a relaunch
  RestartMechanisms restart;       //!< in-process restart and warm standby (policies/restart_path.hpp)
  Micros repair_us = 0;           //!< fixed turnaround, unless `shop` gives a distribution
  RepairShop shop;
  Micros interval_us = 0;         //!< fixed interval, unless `interval_policy` is set
  std::shared_ptr<const IntervalPolicy> interval_policy;
  Micros work_us = kNever;        //!< failure-free compute to finish, or kNever for a horizon run
  Micros end_us = kNever;         //!< horizon, or the cap for a run given its work
  std::optional<Maintenance> maintenance;
  // Flash checkpoints: `save_us` is the blocking snapshot; persists run in the background.
  CheckpointMechanism mechanism = CheckpointMechanism::Sync;
  Micros persist_us = 0;
  int persist_every = 1;
  Micros memory_restore_us = 0;
  bool peer_replicas = false;
  Micros replication_us = 0;
  Micros peer_restore_us = 0;
  bool save_on_failure = false;
  std::shared_ptr<const NetworkDomains> network;  //!< blast radius of leaf, spine and cable faults
  //! Consulted on faults, diagnoses, spare shortages, returns and step times (policies/controller.hpp).
  //! Null: the catalogue's actions, wait for spares, no precheck.
  std::shared_ptr<const control::Controller> controller;
  int replica_nodes = 0;               //!< nodes per data-parallel replica (0: the job is one replica)
  bool quorum = false;                 //!< a failed replica steps out, the others train on (trial_quorum.cpp)
  Micros quorum_reform_us = 0;         //!< the healthy replicas' pause to re-form
  Micros quorum_recover_us = 0;        //!< a healed replica's copy of a peer's live state
  std::vector<double> speed_by_replicas;  //!< job speed by active replicas (the step model's); empty: active / total
  Micros step_us = 0;                  //!< failure-free step at full width
  Micros straggler_observe_us = 0;     //!< > 0: step times go to the controller this long after a node turns slow
  double precheck_detect_probability = 1;  //!< a bad node still in the job fails the precheck
  bool unsaved_work_at_horizon_counts = true;  //!< false: work unsaved at the horizon is lost progress
  bool faults_during_recovery = true;          //!< false: strikes while the job recovers are dropped
  //! Checkpoint transfers priced in the trial's state (the engine's): the save or persist when
  //! `save_us`/`persist_us` come from the model, the storage restore when `restore_us` does, and
  //! a flash snapshot's peer replica and peer restore when the scenario does not give their times.
  //! Null: the scenario's times hold throughout.
  std::shared_ptr<const Physics> physics;
  bool physics_saves = false, physics_restores = false;
  bool physics_replicas = false, physics_peer_restores = false;
  bool contention = true;  //!< a persist shares links with training (when storage is on the compute fabric)
};


struct CheckpointCosts {
  Micros save_us = 0;
  Micros restore_us = 0;
  std::string source;  //!< "scenario" when given, "simgrid" when computed
};

TrialConfig make_trial_config(const Scenario& scenario, const CheckpointCosts& costs);

//! What a user should know before trusting a forecast of this configuration: a fixed checkpoint
//! interval shorter than a save (most of the time goes to saving) or longer than the run (no
//! checkpoint at all), and flash persists that cannot keep up with the snapshots (each then skips
//! to the newest, and storage lags behind).
std::vector<std::string> checkpoint_warnings(const TrialConfig& config);

//! Fault draws a run makes, expected, at which it warns before it starts: each is a draw and an
//! event (about 10 million a second on one core of the machine BENCHMARKS.md names), so the run
//! takes minutes. (A trial's own draws are capped by the loader, at 1e7.)
inline constexpr double kCostlyStrikesPerRun = 1e9;
//! Before a run of `trials`: rates that make the trials draw that many faults (a rate in the wrong
//! unit, thousands of classes) say how many, and what the run then costs.
std::optional<std::string> trial_cost_warning(const Scenario& scenario, const TrialConfig& config, std::int64_t trials);

}  // namespace ctwin
