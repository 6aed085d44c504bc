#pragma once
//! What `ctwin calibrate` shows and draws, from its JSON report (calibration/calibrate.hpp): the
//! traces read, rates by class with intervals, Weibull shapes, step times; SVG plots of rates and
//! of fitted against empirical CDFs.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ctwin {

//! `traces`: how many files were read; `confidence`: of the intervals.
std::string calibration_text(const nlohmann::ordered_json& report, std::size_t traces, double confidence);
//! The plots as (file name, SVG): rates by class with their intervals (`rates_gpu.svg`,
//! `rates_node.svg`), and fitted against empirical CDFs of each class's lifetimes
//! (`lifetimes_<class>.svg`) and of repairs and recoveries.
std::vector<std::pair<std::string, std::string>> calibration_plots(const nlohmann::ordered_json& report);

}  // namespace ctwin
