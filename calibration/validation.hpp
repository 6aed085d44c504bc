#pragma once
//! `ctwin validate`: a scenario's forecast held against one observed run. The scenario is
//! simulated over the traced period many times; each observed figure is judged against the
//! spread of single trials, because the trace is one run, not a mean.

#include <string>

#include <nlohmann/json.hpp>

#include "calibration/observed_run.hpp"
#include "models/scenario.hpp"
#include "sim/monte_carlo.hpp"

namespace ctwin {

struct ValidateOptions {
  RunOptions run;            //!< trials, seed, jobs, engine
  double confidence = 0.95;  //!< of the interval of single trials that decides a verdict
};

//! The scenario cut to the traced period: a wall-clock horizon of the run's length.
Scenario over_traced_period(Scenario scenario, const calib::ObservedRun& observed);

//! Simulates `scenario` (already cut to the traced period) and compares; the report as JSON.
nlohmann::ordered_json validate_against(const Scenario& scenario, const calib::ObservedRun& observed, const ValidateOptions& options);


}  // namespace ctwin
