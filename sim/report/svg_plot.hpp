#pragma once
//! A small SVG line plot: goodput against a swept parameter, with CI bars and the optimum marked.
//! Written directly (no plotting dependency); opens in any browser.

#include <optional>
#include <string>
#include <vector>

namespace ctwin {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y, y_low, y_high;
};

struct Plot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool log_x = false;
  std::optional<double> marker_x;  //!< a vertical line (the optimum)
  std::string marker_label;
};

std::string plot_svg(const Plot& plot);

}  // namespace ctwin
