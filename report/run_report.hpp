#pragma once
//! What a Monte Carlo run produces for people and programs: the one-screen summary, the JSON
//! report (docs/report.md), per-trial CSV and trial 0's event log (docs/event-log.md). The
//! timeline is in timeline.hpp.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/run_sensitivity.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

inline constexpr int kReportSchemaVersion = 1;

struct RunReportInput {
  const Scenario& scenario;
  const RunOptions& options;
  const RunResult& result;
  const RunSensitivity* sensitivity = nullptr;  //!< `ctwin run --sensitivity`
};

//! The JSON report's per_trial rows: the first this many trials (--csv has them all).
inline constexpr std::size_t kPerTrialJsonRows = RunTally::kKeptTrials;

std::string report_json(const RunReportInput& in);
//! A forecast that runs past the window its rates were calibrated on (`calibration.window`) says so.
std::optional<std::string> window_warning(const Scenario& scenario, const RunResult& result);
std::string summary_text(const RunReportInput& in);
//! The per-trial CSV, a row at a time (`ctwin run --csv` streams them as the trials finish).
std::string trials_csv_header(const Scenario& scenario);
std::string trials_csv_row(int index, const TrialResult& t);
//! A trial's event log (core/event_log.hpp) with its closing ledger rows (ctwin validate reads them).
std::string trial_event_log(const Scenario& scenario, const std::vector<RunEvent>& events, const TrialResult& trial);

const char* engine_name(EngineKind engine);
//! 1234567 -> "1,234,567".
std::string thousands(long long v);
//! {mean, ci95_low, ci95_high, p5, p50, p95}: how every report writes a summary.
nlohmann::ordered_json summary_json(const Summary& s);

}  // namespace ctwin
