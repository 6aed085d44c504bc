#pragma once
//! How much the fields a forecast usually assumes can move its goodput: spare nodes, repair time,
//! the fleets' spread, the rates' uncertainty, detection times and the restart overhead, each over
//! a plausible range, one at a time, the others as the scenario has them. Every variant runs the
//! scenario's trial seeds (common random numbers, as sweep and compare do), so its difference from
//! the scenario's goodput is paired trial by trial. A field the scenario does not have is skipped,
//! with the reason.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/experiments.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

//! One value of a field: the scenario's document with `settings`, or its rates held exact.
struct RunVariant {
  std::string value;  //!< as the report says it: "16", "1.50 d", "x0.5", "off"
  std::vector<Setting> settings;
  bool rates_exact = false;  //!< --rate-uncertainty off for this variant
};

//! A field, its range and why that range is plausible; `skipped` says why it is not varied.
struct AssumedField {
  std::string field;    //!< "spare nodes"
  std::string pointer;  //!< where it is: "/cluster/spare_nodes", "/faults/*/detection"
  std::string given;    //!< the scenario's value, as the report says it
  std::string range;    //!< "x0.5 .. x2 of the scenario's"
  std::string why;
  std::string skipped;  //!< "" when it runs
  std::vector<RunVariant> variants;  //!< below the scenario's value first, then above
};

//! The assumed fields of `scenario` (read from `document`) and their variants, for a run with `options`.
std::vector<AssumedField> assumed_fields(const nlohmann::json& document, const Scenario& scenario, const RunOptions& options);

struct RunSensitivityPoint {
  std::string value;
  Summary goodput;
  Summary vs_given;      //!< per trial, this value's goodput less the scenario's (paired)
  std::string excluded;  //!< "" when it ran; else why it cannot (the variant's scenario is refused)
};

struct RunSensitivityField {
  AssumedField field;
  std::vector<RunSensitivityPoint> points;  //!< one per variant, in order
  double min = 0, max = 0;                  //!< mean goodput over the points that ran and the scenario's own
  std::string lowest, highest;              //!< their values
};

struct RunSensitivity {
  Summary given;
  int trials = 0;
  std::vector<RunSensitivityField> fields;
  double min = 0, max = 0;  //!< over every field, one at a time
  std::string most;         //!< the field whose range moves goodput most ("" if none moves it)
};

//! `goodputs`: the scenario's own trials' (options' seeds), in trial order; `given` their summary.
RunSensitivity run_sensitivity(const nlohmann::json& document, const std::string& file, const Scenario& scenario,
                               const RunOptions& options, const std::vector<double>& goodputs, const Summary& given);

}  // namespace ctwin
