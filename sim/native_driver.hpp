#pragma once
//! The native driver: our own clock for the trial state machine, the fast path for Monte Carlo.
//! Its "event queue" has two sources, the fault timeline and the trial's own timer, so each step
//! is a comparison: the timer wins ties. Both engines run trials through it; they differ in the
//! physics their trial configuration carries (trial/physics.hpp).

#include "models/fault_timeline.hpp"
#include "trial/trial.hpp"

namespace ctwin {

TrialResult run_trial_native(const TrialConfig& config, const FaultTimelineModel& faults, std::uint64_t seed,
                             TrialObserver* observer = nullptr);

}  // namespace ctwin
