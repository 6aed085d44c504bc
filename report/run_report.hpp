#pragma once
//! What a Monte Carlo run produces for people and programs: the one-screen summary, the JSON
//! report (docs/report.md), per-trial CSV and trial 0's event log (docs/event-log.md). The
//! timeline is in timeline.hpp.

#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

inline constexpr int kReportSchemaVersion = 1;

struct RunReportInput {
  const Scenario& scenario;
  const RunOptions& options;
  const RunResult& result;
};

std::string report_json(const RunReportInput& in);
std::string summary_text(const RunReportInput& in);
std::string trials_csv(const RunReportInput& in);
//! With a ledger, closing `ledger` rows give the trial's seconds by category (ctwin validate reads them).
std::string event_log_csv(const Scenario& scenario, const std::vector<TrialEvent>& events, const TrialResult* trial = nullptr);

const char* engine_name(EngineKind engine);
//! {mean, ci95_low, ci95_high, p5, p50, p95}: how every report writes a summary.
nlohmann::ordered_json summary_json(const Summary& s);

}  // namespace ctwin
