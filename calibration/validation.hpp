#pragma once
//! `ctwin validate`: a scenario's forecast held against one observed run. The scenario is
//! simulated over the traced period many times; each observed figure is judged against the
//! spread of single trials, because the trace is one run, not a mean.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/observed_run.hpp"
#include "models/scenario.hpp"
#include "sim/monte_carlo.hpp"

namespace ctwin {

//! The two questions a run answers against a scenario whose rates are uncertain, each its own
//! simulation on the same seeds (docs/calibration.md):
//!  - Produced: could this scenario have produced this run? Each trial draws its rates from every
//!    uncertainty the scenario states (its evidence, the fleets' spread): wide, hard to fail.
//!  - Behaves: does this fleet behave as the scenario's rates say? The rates held exact: the test a
//!    fleet whose rates differ from the scenario's fails.
enum class ValidationQuestion { Produced, Behaves };

struct ValidateOptions {
  RunOptions run;            //!< trials, seed, jobs, engine (its rate_uncertainty is set per question)
  double confidence = 0.95;  //!< of the interval of single trials that decides a verdict
  std::vector<ValidationQuestion> questions{ValidationQuestion::Produced, ValidationQuestion::Behaves};
};

//! The scenario cut to the traced period: a wall-clock horizon of the run's length.
Scenario over_traced_period(Scenario scenario, const calib::ObservedRun& observed);

//! Simulates `scenario` (already cut to the traced period) and compares; the report as JSON.
nlohmann::ordered_json validate_against(const Scenario& scenario, const calib::ObservedRun& observed, const ValidateOptions& options);


}  // namespace ctwin
