#pragma once
//! A trial's Chrome trace-event timeline (opens in Perfetto): the job's phases, checkpoint saves,
//! faults, and nodes (slow spans, repairs, spares) on their tracks.

#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "trial/trial.hpp"

namespace ctwin {

std::string timeline_json(const Scenario& scenario, const TrialConfig& config, const std::vector<RunEvent>& events);

}  // namespace ctwin
