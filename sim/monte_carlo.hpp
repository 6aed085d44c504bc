#pragma once
//! Monte Carlo over trials on either driver. Trial i always draws from trial_seed(seed, i), and
//! results are kept in trial order, so the outcome does not depend on `jobs`.

#include <vector>

#include "models/scenario.hpp"
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
  bool record_trial0 = false;  //!< keep trial 0's events for the event log and the timeline
};

struct RunResult {
  TrialConfig config;
  CheckpointCosts costs;
  std::vector<TrialResult> trials;
  std::vector<RunEvent> trial0_events;
};

//! Save and restore times: as given in the scenario, else from the SimGrid physical model (cached).
CheckpointCosts resolve_checkpoint_costs(const Scenario& scenario);

RunResult run_trials(const Scenario& scenario, const RunOptions& options);

}  // namespace ctwin
