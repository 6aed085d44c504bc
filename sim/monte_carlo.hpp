#pragma once
//! Monte Carlo over trials on either engine. Trial i always draws from trial_seed(seed, i), and
//! results are kept in trial order, so the outcome does not depend on `jobs`. The engines differ in
//! their physics (trial/physics.hpp): the native engine prices checkpoint transfers in closed form,
//! the SimGrid engine runs them on the fabric in the trial's state.

#include <functional>
#include <optional>
#include <vector>

#include "models/scenario.hpp"
#include "sim/run_tail.hpp"
#include "sim/run_tally.hpp"
#include "trial/trial.hpp"
#include "trial/trial_config.hpp"

namespace ctwin {

enum class EngineKind { Native, Simgrid };

struct RunOptions {
  int trials = 1;
  int first_trial = 0;  //!< runs trials first_trial .. first_trial + trials - 1 (a rank's slice)
  std::uint64_t seed = 1;
  int jobs = 1;
  EngineKind engine = EngineKind::Native;
  bool record_events = false;  //!< keep one trial's events for the event log and the timeline
  int recorded_trial = 0;      //!< the trial whose events are kept
  bool contention = true;      //!< persists share links with training (storage on the compute fabric)
  //! Each trial draws its classes' rates from their uncertainty (two-level Monte Carlo); off: the
  //! rates are held exact. Only classes with a `rate_uncertainty` are drawn.
  bool rate_uncertainty = true;
  //! Set: each trial draws its step time from this range (`ctwin run --step-uncertainty on`): as
  //! factors of the point, log-triangular with its mode at the point. Work counted in steps
  //! (job.steps) takes as long as its steps do.
  struct StepDraw {
    double low = 1, high = 1;
    bool work_in_steps = false;
  };
  std::optional<StepDraw> step_draw;
  //! Every trial's whole result in RunResult::trials (tests, validation, the engines compared).
  //! Off (`ctwin run`), only the tally: memory stops growing with the trials.
  bool keep_trials = true;
  bool keep_goodputs = false;  //!< every trial's goodput in the tally (pairing variants; a percentile's trial)
  //! After the run, RunResult::tail: the ledgers of the runs at or below the goodput p5, of the p5
  //! run and of the median run (the tally keeps the goodputs and the lowest 5%'s ledgers).
  bool tail = false;
  //! Each trial as the run takes it, in trial order (the per-trial CSV, streamed); index counts from first_trial.
  std::function<void(int index, const TrialResult&)> on_trial = {};
};

struct RunResult {
  TrialConfig config;
  CheckpointCosts costs;
  bool rates_drawn = false;  //!< the trials drew their rates from the scenario's uncertainty
  RunTally tally;                    //!< what every report reads
  std::vector<TrialResult> trials;   //!< in order, when options.keep_trials
  std::vector<RunEvent> recorded_events;
  TrialResult recorded;              //!< the recorded trial's result (its event log's closing ledger)
  std::optional<RunTail> tail;       //!< when options.tail
};

//! Save and restore times of the healthy full-width job: as given in the scenario, else from the
//! storage model in closed form (sim/transfer_physics.hpp).
CheckpointCosts resolve_checkpoint_costs(const Scenario& scenario);
//! The engine's physics for a scenario whose checkpoint size is given (null when its times are).
std::shared_ptr<const Physics> make_physics(const Scenario& scenario, EngineKind engine);

//! The trials' configuration: the scenario's, with the engine's physics (and options' contention).
TrialConfig make_run_config(const Scenario& scenario, const RunOptions& options, const CheckpointCosts& costs);

RunResult run_trials(const Scenario& scenario, const RunOptions& options);

//! The trial at goodput quantile q in [0, 1] (by the nearest rank; ties go to the lower index):
//! the trial a report shows as typical (0.5) or as a bad case (0.05).
int trial_at_goodput_quantile(const std::vector<double>& goodputs, double q);

}  // namespace ctwin
