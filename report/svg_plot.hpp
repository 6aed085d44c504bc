#pragma once
//! A small SVG plot: lines or points with CI bars, numeric or categorical x, linear or log axes
//! (goodput against a swept parameter, fitted against empirical CDFs, rates by class).
//! Written directly (no plotting dependency); opens in any browser.

#include <optional>
#include <string>
#include <vector>

namespace ctwin {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y, y_low, y_high;
  bool line = true;  //!< false: points (and CI bars) only
};

struct Plot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool log_x = false, log_y = false;  //!< a log axis needs positive values
  std::vector<std::string> x_labels;   //!< categories at x = 0, 1, ... instead of numeric ticks
  std::optional<double> marker_x;  //!< a vertical line (the optimum)
  std::string marker_label;
};

std::string plot_svg(const Plot& plot);

}  // namespace ctwin
