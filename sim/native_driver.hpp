#pragma once
//! The native driver: our own clock for the trial state machine, the fast path for Monte Carlo.
//! Its "event queue" has two sources, the fault timeline and the trial's own timer, so each step
//! is a comparison: the timer wins ties, exactly as in the SimGrid driver.

#include "models/fault_timeline.hpp"
#include "trial/trial.hpp"

namespace ctwin {

TrialResult run_trial_native(const TrialConfig& config, const FaultTimelineModel& faults, std::uint64_t seed,
                             TrialObserver* observer = nullptr);

}  // namespace ctwin
