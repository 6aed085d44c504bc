#pragma once
//! What the decision tools (`ctwin sweep`, `optimize`, `compare`) show and write: the terminal
//! table, the JSON (schema 1, docs/report.md), the CSV and the SVG plot of goodput.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiments.hpp"

namespace ctwin {

//! One experiment's outputs, all rendered before anything is written.
struct ExperimentReport {
  std::string text, json, csv, svg;
};

//! Where an experiment came from, as its header line says.
struct ExperimentSource {
  std::string scenario_path;
  int trials = 0;
  std::uint64_t seed = 0;
  std::optional<double> current_interval_s;  //!< the scenario's own fixed interval, marked on optimize's plot
};

//! One axis of a sweep: a JSON pointer and the values it takes.
struct SweepAxis {
  std::string pointer;
  std::vector<nlohmann::json> values;
};

//! `results` in the order of the axes' product (the first axis outermost).
ExperimentReport sweep_report(const ExperimentSource& source, const std::vector<SweepAxis>& axes,
                              const std::vector<VariantResult>& results);
ExperimentReport optimize_report(const ExperimentSource& source, const OptimizeResult& result);
//! `choices`: the --choose texts (/pointer=a,b), whose pointers head the CSV.
ExperimentReport choice_report(const ExperimentSource& source, const std::vector<std::string>& choices,
                               std::size_t combinations, const ChoiceResult& result);
//! `names[0]` is the baseline.
ExperimentReport compare_report(const ExperimentSource& source, const std::vector<std::string>& names,
                                const std::vector<VariantResult>& results);

}  // namespace ctwin
