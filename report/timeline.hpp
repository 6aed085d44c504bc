#pragma once
//! A run's Chrome trace-event timeline (opens in Perfetto): the job's phases, checkpoint saves and
//! faults on their tracks, then one track per node that has something to show (slow spans, faults,
//! repairs, spares), in node order; nodes with nothing happening get none, so 16k nodes stay readable.
//! Two sources, one drawing: a simulated trial's events, or any event log (a live job's included).

#include <string>
#include <vector>

#include "core/event_log.hpp"
#include "models/scenario.hpp"
#include "trial/trial.hpp"

namespace ctwin {

//! A simulated trial (`ctwin run --timeline`): saves drawn as spans of the configured save time.
std::string timeline_json(const Scenario& scenario, const TrialConfig& config, const std::vector<RunEvent>& events, int trial);

//! An event log as `ctwin run --events` or the live supervisor writes it (`ctwin timeline`):
//! checkpoints are instants (the log gives their end only), the rest as for a trial.
std::string timeline_json(const std::string& title, const std::vector<LoggedEvent>& events);

}  // namespace ctwin
