#pragma once
//! Monte Carlo runs for the simulator's tiers: options, and two runs compared trial by trial.

#include "sim/monte_carlo.hpp"

namespace ctwin::test {

RunOptions run_options(int trials, std::uint64_t seed, int jobs = 2, EngineKind engine = EngineKind::Native);

//! Same seeds, ledgers, wall times, fault counts and checkpoints, trial by trial (Catch2 checks).
void require_same_trials(const RunResult& a, const RunResult& b);

}  // namespace ctwin::test
