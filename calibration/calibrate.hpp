#pragma once
//! `ctwin calibrate`: fleet traces in, a scenario with every fitted number, its confidence
//! interval and its provenance out, plus a report of the fits.
//!
//! Each trace is recognised by its first line (an event log's header, sacct's "JobID|...", an
//! incident table's "class,count,..." header; anything else is read as a kernel log). Faults
//! become per-class rates with exact Poisson intervals over the trace's exposure; lifetimes a
//! Weibull fit with a test of shape = 1; repair and recovery durations lognormal fits; per-node
//! counts a lemon list; Slurm jobs the job-MTTF-against-size law.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/estimators.hpp"
#include "calibration/shape_choice.hpp"

namespace ctwin::calib {

struct CalibrateOptions {
  std::optional<std::string> base;  //!< scenario whose classes, cluster and job the fit updates
  //! A population prior file (ctwin prior) the base's grouped classes are pooled with; none: each
  //! class from its own count alone, as without groups.
  std::optional<std::string> prior;
  int gpus_per_node = 8;            //!< without a base
  int year = 1970;                  //!< for syslog lines, which carry no year
  double dedupe_s = 60;             //!< repeats of an Xid on one GPU within this are one fault
  double confidence = 0.95;
  //! Write the slow nodes of a step log that names no stage or role (the user knows its nodes do alike work).
  bool slow_nodes_without_stages = false;
};

//! The rate of one fault class, as fitted.

struct ClassEstimate {
  std::string name;
  std::string component = "gpu";  //!< exposure unit: gpu or node
  int xid = -1;
  double count = 0;
  double exposure_hours = 0;       //!< component-hours
  Interval rate_per_hour;
  Interval observed_per_hour;      //!< count / exposure, whatever the rate written
  std::optional<WeibullFit> lifetimes;
  bool from_midlife = false;   //!< the lives start at the trace's start, not at the parts' birth
  bool shape_trusted = false;  //!< the class leaves the exponential (choose_shapes: shape_choice.hpp)
  //! A significant trend, fitted as a power law in time: the rate written is its intensity at the
  //! traces' end, and the class carries the trend (the clock's units are seconds).
  std::optional<PowerLawFit> trend;
  std::string effect;
  std::vector<std::string> provenance;
};

struct CalibrationResult {
  nlohmann::ordered_json scenario;
  nlohmann::ordered_json report;
};

//! Throws TraceUnreadable (a file where nothing parses) and ScenarioInvalid (a bad base).
CalibrationResult calibrate(const std::vector<std::string>& traces, const CalibrateOptions& options);

}  // namespace ctwin::calib
