#pragma once
//! The calibrated scenario from the fits: each class's rate with the evidence behind it, the
//! remap-to-RMA chain, the repair shop and a step log's slow nodes, written into the base's
//! document (or a skeleton). Only what the traces support changes; every change says its source.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/calibrate.hpp"
#include "core/units.hpp"
#include "calibration/evidence.hpp"
#include "calibration/step_times.hpp"

namespace ctwin::calib {

inline constexpr double kHoursPerYear = kSecondsPerYear / 3600;  //!< as rates are read back

//! A number as scenarios write it ("%.6g").
std::string number(double x);
nlohmann::ordered_json interval_json(const Interval& i, double scale = 1);
//! The standard normal quantile an interval of `confidence` spans either side of its centre.
double z_of_interval(double confidence);

//! Each fitted class into the scenario's faults (a class the base lacks is added with
//! placeholders), with its interval and provenance. Returns the names added.
nlohmann::ordered_json apply_class_fits(nlohmann::ordered_json& doc, const std::vector<ClassEstimate>& estimates, const CalibrateOptions& options);
//! The share of row remaps that failed, into the double-bit error class's `remap`.
void apply_row_remaps(nlohmann::ordered_json& doc, const Evidence& evidence, const CalibrateOptions& options, nlohmann::ordered_json& report);
//! A live job's measured restart cost, into the overhead of the path its restarts took
//! (`restart.overhead` for a relaunch, `restart.in_process` or `restart.warm_standby`), when they all
//! took one: the ledger does not split its restart time by path.
void apply_measured_restarts(nlohmann::ordered_json& doc, const Evidence& evidence, nlohmann::ordered_json& report);
//! The repair shop from the repairs seen: a fixed turnaround, or a lognormal.
void apply_repairs(nlohmann::ordered_json& doc, const std::optional<LognormalFit>& repair);
//! A step log's slow nodes, as the class `slow_node` (when each node was compared with its peers).
void apply_slow_nodes(nlohmann::ordered_json& doc, const StepTimeFit& steps, const std::vector<std::string>& sources,
                      const CalibrateOptions& options, nlohmann::ordered_json& report);

}  // namespace ctwin::calib
