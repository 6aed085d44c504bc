#pragma once
//! The SimGrid driver: the same trial state machine run by S4U actors on the scenario's platform.
//! A fault injector actor sleeps until each fault of the timeline and hands it to the job master;
//! the master runs the trial, and mirrors its node state onto the platform: a crash or hang turns
//! the victim's host off until the job restarts (or, when the node itself is down, until it is
//! rebooted or back from repair), and a slow node changes pstate. The master checks that SimGrid's
//! host state agrees with the trial after every fault. The platform is built
//! once; each trial runs in a fork of that process, so every trial starts from a clean engine.

#include <vector>

#include "models/fault_timeline.hpp"
#include "trial/trial.hpp"

namespace ctwin {

struct SimgridRun {
  std::vector<TrialResult> trials;
  std::vector<RunEvent> trial0_events;
};

SimgridRun run_trials_simgrid(const Scenario& scenario, const TrialConfig& config, const FaultTimelineModel& faults,
                              std::uint64_t seed, int first_trial, int trials, int jobs, bool record_trial0);

}  // namespace ctwin
