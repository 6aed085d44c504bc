#pragma once
//! A trial's Chrome trace-event timeline (opens in Perfetto): the job's phases, checkpoint saves and
//! faults on their tracks, then one track per node that has something to show (slow spans, faults,
//! repairs, spares), in node order; nodes with nothing happening get none, so 16k nodes stay readable.

#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "trial/trial.hpp"

namespace ctwin {

std::string timeline_json(const Scenario& scenario, const TrialConfig& config, const std::vector<RunEvent>& events, int trial);

}  // namespace ctwin
