#pragma once
//! A small SVG plot: lines or points with CI bars, numeric, duration or categorical x, linear or
//! log axes, reference levels, panels stacked (goodput against a swept parameter, fitted against empirical CDFs, rates by class).
//! Written directly (no plotting dependency); opens in any browser. Ticks are round numbers
//! (1, 2, 5 x 10^k; decades on a log axis; 1 min, 10 min, 1 h... on a duration axis).

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ctwin {

struct PlotSeries {
  std::string label;
  std::vector<double> x, y, y_low, y_high;
  bool line = true;    //!< false: points (and CI bars) only
  bool points = true;  //!< false: the line alone (a fitted curve)
};

//! A vertical line across the plot (the optimum, the current setting), with an optional shaded
//! band (the optimum's confidence interval).
struct PlotMarker {
  double x = 0;
  std::string label;
  bool dashed = true;
  std::optional<std::pair<double, double>> band;
};

//! A horizontal line across the plot (zero in a plot of differences: the baseline).
struct PlotLevel {
  double y = 0;
  std::string label;
};

struct Plot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  std::vector<PlotLevel> levels;
  bool log_x = false, log_y = false;  //!< a log axis needs positive values
  bool x_durations = false;            //!< x is seconds: ticks at round durations, labelled "10 min"
  std::vector<std::string> x_labels;   //!< categories at x = 0, 1, ... instead of numeric ticks
  std::optional<std::pair<double, double>> y_range;  //!< fixed y limits (a CDF: 0 to 1)
  std::vector<PlotMarker> markers;
};

std::string plot_svg(const Plot& plot);
//! Plots one above the other in one SVG (the answer first: a paired difference above the goodputs it comes from).
std::string plot_svg_stack(const std::vector<Plot>& plots);

//! Round tick values covering [lo, hi] (about `target` of them), and the axis limits they imply.
struct Ticks {
  std::vector<double> values;
  double lo = 0, hi = 1;
};
Ticks linear_ticks(double lo, double hi, int target = 5);
Ticks log_ticks(double lo, double hi);
Ticks duration_ticks(double lo_s, double hi_s, bool log_axis);
//! A tick's label: the fewest digits that tell the ticks apart ("0.92", "1800", "1e+06").
std::string tick_label(double value, double step);
//! "30 s", "10 min", "2 h", "1.5 d".
std::string duration_tick_label(double seconds);

}  // namespace ctwin
