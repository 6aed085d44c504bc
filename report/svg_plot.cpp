#include "report/svg_plot.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace ctwin {
namespace {

constexpr double kWidth = 760, kHeight = 460, kLeft = 84, kRight = 34, kTop = 56, kBottom = 62;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

//! Coordinates: a fixed number of decimals, so the bytes do not depend on the platform's %g.
std::string px(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", v);
  return buffer;
}

bool finite(double v) { return std::isfinite(v); }

//! Round durations a tick may sit on, in seconds.
constexpr std::array<double, 22> kDurations{1,    2,    5,     10,    15,    30,     60,     120,    300,     600,     900,
                                            1800, 3600, 7200,  10800, 21600, 43200,  86400,  172800, 604800,  1209600, 2592000};

}  // namespace

Ticks linear_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) {
    const double d = lo != 0 ? std::abs(lo) * 0.05 : 0.5;
    lo -= d;
    hi += d;
  }
  const double raw = (hi - lo) / target, magnitude = std::pow(10, std::floor(std::log10(raw))), n = raw / magnitude;
  const double step = (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * magnitude;
  Ticks t;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  for (double k = first; k <= last; ++k) t.values.push_back(k * step == 0 ? 0.0 : k * step);
  t.lo = first * step;
  t.hi = last * step;
  return t;
}

Ticks log_ticks(double lo, double hi) {
  const double a = std::floor(std::log10(lo)), b = std::max(a + 1, std::ceil(std::log10(hi)));
  Ticks t;
  t.lo = std::pow(10, a);
  t.hi = std::pow(10, b);
  for (double k = a; k <= b; ++k) {
    const double decade = std::pow(10, k);
    t.values.push_back(decade);
    if (b - a <= 2 && k < b)
      for (double m : {2.0, 5.0}) t.values.push_back(m * decade);
  }
  std::sort(t.values.begin(), t.values.end());
  return t;
}

Ticks duration_ticks(double lo_s, double hi_s, bool log_axis) {
  if (!(hi_s > lo_s)) hi_s = lo_s * 2 + 1;
  Ticks t;
  if (!log_axis) {
    double step = kDurations.back();
    for (double d : kDurations)
      if ((hi_s - lo_s) / d <= 7) {
        step = d;
        break;
      }
    t.lo = std::floor(lo_s / step) * step;
    t.hi = std::ceil(hi_s / step) * step;
    for (double k = t.lo / step; k <= t.hi / step + 1e-9; ++k) t.values.push_back(k * step);
    return t;
  }
  // The round durations just outside the data, and those between, thinned to at most 7.
  t.lo = kDurations.front();
  for (double d : kDurations)
    if (d <= lo_s) t.lo = d;
  t.hi = kDurations.back();
  for (auto it = kDurations.rbegin(); it != kDurations.rend(); ++it)
    if (*it >= hi_s) t.hi = *it;
  t.lo = std::min(t.lo, lo_s);
  t.hi = std::max(t.hi, hi_s);
  std::vector<double> within;
  for (double d : kDurations)
    if (d >= t.lo && d <= t.hi) within.push_back(d);
  const std::size_t every = (within.size() + 6) / 7;
  for (std::size_t i = 0; i < within.size(); i += std::max<std::size_t>(1, every)) t.values.push_back(within[i]);
  return t;
}

std::string tick_label(double value, double step) {
  char buffer[32];
  if (std::abs(value) >= 1e6 || (step > 0 && step < 1e-4)) {
    std::snprintf(buffer, sizeof buffer, "%g", value);
  } else {
    const int decimals = step > 0 ? std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9))) : 0;
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  }
  std::string out = buffer;
  if (out.rfind("-0", 0) == 0 && out.find_first_not_of("-0.") == std::string::npos) out.erase(0, 1);
  return out;
}

std::string duration_tick_label(double seconds) {
  char buffer[32];
  if (seconds < 60) std::snprintf(buffer, sizeof buffer, "%g s", seconds);
  else if (seconds < 3600) std::snprintf(buffer, sizeof buffer, "%g min", seconds / 60);
  else if (seconds < 86400) std::snprintf(buffer, sizeof buffer, "%g h", seconds / 3600);
  else std::snprintf(buffer, sizeof buffer, "%g d", seconds / 86400);
  return buffer;
}

std::string plot_svg(const Plot& plot) {
  // The data's extent (finite values only: a NaN is never drawn), the markers' too.
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const auto& s : plot.series)
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!finite(s.x[i]) || !finite(s.y[i])) continue;
      x_min = std::min(x_min, s.x[i]);
      x_max = std::max(x_max, s.x[i]);
      const double low = i < s.y_low.size() && finite(s.y_low[i]) ? s.y_low[i] : s.y[i];
      const double high = i < s.y_high.size() && finite(s.y_high[i]) ? s.y_high[i] : s.y[i];
      y_min = std::min({y_min, low, s.y[i]});
      y_max = std::max({y_max, high, s.y[i]});
    }
  for (const auto& m : plot.markers) {
    if (!finite(m.x) || (plot.log_x && m.x <= 0)) continue;  // no place on a log axis
    x_min = std::min(x_min, m.band ? m.band->first : m.x);
    x_max = std::max(x_max, m.band ? m.band->second : m.x);
  }
  for (const auto& l : plot.levels)
    if (finite(l.y)) y_min = std::min(y_min, l.y), y_max = std::max(y_max, l.y);
  if (!finite(x_min)) x_min = 0, x_max = 1;
  if (!finite(y_min)) y_min = 0, y_max = 1;

  const bool categories = !plot.x_labels.empty();
  std::size_t longest = 0;
  for (const auto& l : plot.x_labels) longest = std::max(longest, l.size());
  const bool slanted = categories && longest * 7.0 > (kWidth - kLeft - kRight) / static_cast<double>(plot.x_labels.size());
  const double extra = slanted ? std::min(160.0, 5.0 * static_cast<double>(longest)) : 0;
  const double height = kHeight + extra, bottom = kBottom + extra;

  const bool log_x = plot.log_x && x_min > 0 && !categories;
  Ticks xt;
  if (categories) {
    xt.lo = -0.5;
    xt.hi = static_cast<double>(plot.x_labels.size()) - 0.5;
  } else if (log_x) {
    xt = plot.x_durations ? duration_ticks(x_min, x_max, true) : log_ticks(x_min, x_max);
  } else {
    const double pad = (x_max - x_min) * 0.04;  // the first and last points off the frame
    xt = plot.x_durations ? duration_ticks(std::max(0.0, x_min - pad), x_max + pad, false) : linear_ticks(x_min - pad, x_max + pad);
  }
  const bool log_y = plot.log_y && y_min > 0 && !plot.y_range;
  Ticks yt;
  if (plot.y_range) {
    yt = linear_ticks(plot.y_range->first, plot.y_range->second);
    yt.lo = plot.y_range->first;
    yt.hi = plot.y_range->second;
  } else if (log_y) {
    yt = log_ticks(y_min, y_max);
  } else {
    const double pad = (y_max - y_min) * 0.04;  // points off the frame
    yt = linear_ticks(y_min - pad, y_max + pad);
  }
  const double y_step = yt.values.size() > 1 ? yt.values[1] - yt.values[0] : 1;
  const double x_step = xt.values.size() > 1 ? xt.values[1] - xt.values[0] : 1;

  auto fx = [&](double x) {
    const double u = log_x ? std::log(x / xt.lo) / std::log(xt.hi / xt.lo) : (x - xt.lo) / (xt.hi - xt.lo);
    return kLeft + u * (kWidth - kLeft - kRight);
  };
  auto fy = [&](double y) {
    y = std::clamp(y, yt.lo, yt.hi);
    const double u = log_y ? std::log(y / yt.lo) / std::log(yt.hi / yt.lo) : (y - yt.lo) / (yt.hi - yt.lo);
    return height - bottom - u * (height - kTop - bottom);
  };
  const double plot_right = kWidth - kRight, plot_bottom = height - bottom;

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(kWidth) << "\" height=\"" << px(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text class=\"title\" x=\"" << px(kWidth / 2) << "\" y=\"26\" text-anchor=\"middle\" font-size=\"15\">" << escape(plot.title)
      << "</text>\n";
  // Markers' bands under everything.
  auto placeable = [&](double x) { return finite(x) && (!log_x || x > 0); };
  for (const auto& m : plot.markers)
    if (m.band && placeable(m.band->first) && placeable(m.band->second))
      svg << "<rect x=\"" << px(fx(m.band->first)) << "\" y=\"" << px(kTop) << "\" width=\""
          << px(std::max(1.0, fx(m.band->second) - fx(m.band->first))) << "\" height=\"" << px(plot_bottom - kTop)
          << "\" fill=\"#999\" opacity=\"0.18\"/>\n";
  // Grid and ticks.
  for (double y : yt.values) {
    if (y < yt.lo - 1e-12 || y > yt.hi + 1e-12) continue;
    svg << "<line x1=\"" << px(kLeft) << "\" y1=\"" << px(fy(y)) << "\" x2=\"" << px(plot_right) << "\" y2=\"" << px(fy(y))
        << "\" stroke=\"#e6e6e6\"/>\n<text class=\"ytick\" x=\"" << px(kLeft - 8) << "\" y=\"" << px(fy(y) + 4)
        << "\" text-anchor=\"end\">" << (log_y ? tick_label(y, y) : tick_label(y, y_step)) << "</text>\n";
  }
  for (double x : xt.values) {
    svg << "<line x1=\"" << px(fx(x)) << "\" y1=\"" << px(kTop) << "\" x2=\"" << px(fx(x)) << "\" y2=\"" << px(plot_bottom)
        << "\" stroke=\"#f0f0f0\"/>\n<text class=\"xtick\" x=\"" << px(fx(x)) << "\" y=\"" << px(plot_bottom + 18)
        << "\" text-anchor=\"middle\">"
        << (plot.x_durations ? duration_tick_label(x) : log_x ? tick_label(x, x) : tick_label(x, x_step)) << "</text>\n";
  }
  for (std::size_t i = 0; i < plot.x_labels.size(); ++i) {
    const double x = fx(static_cast<double>(i));
    if (slanted)
      svg << "<text class=\"xcategory\" transform=\"translate(" << px(x + 4) << "," << px(plot_bottom + 14)
          << ") rotate(-35)\" text-anchor=\"end\" font-size=\"11\">" << escape(plot.x_labels[i]) << "</text>\n";
    else
      svg << "<text class=\"xcategory\" x=\"" << px(x) << "\" y=\"" << px(plot_bottom + 18) << "\" text-anchor=\"middle\">"
          << escape(plot.x_labels[i]) << "</text>\n";
  }
  svg << "<line x1=\"" << px(kLeft) << "\" y1=\"" << px(plot_bottom) << "\" x2=\"" << px(plot_right) << "\" y2=\"" << px(plot_bottom)
      << "\" stroke=\"black\"/>\n<line x1=\"" << px(kLeft) << "\" y1=\"" << px(kTop) << "\" x2=\"" << px(kLeft) << "\" y2=\""
      << px(plot_bottom) << "\" stroke=\"black\"/>\n";
  svg << "<text class=\"xlabel\" x=\"" << px((kLeft + plot_right) / 2) << "\" y=\"" << px(height - 16) << "\" text-anchor=\"middle\">"
      << escape(plot.x_label) << "</text>\n";
  svg << "<text class=\"ylabel\" transform=\"translate(20," << px((kTop + plot_bottom) / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << escape(plot.y_label) << "</text>\n";
  // Levels under the series: a solid grey line, labelled at its left end.
  for (const auto& l : plot.levels) {
    if (!finite(l.y) || l.y < yt.lo || l.y > yt.hi) continue;
    svg << "<line x1=\"" << px(kLeft) << "\" y1=\"" << px(fy(l.y)) << "\" x2=\"" << px(plot_right) << "\" y2=\"" << px(fy(l.y))
        << "\" stroke=\"#555\" stroke-width=\"1.2\"/>\n<text class=\"level\" x=\"" << px(kLeft + 6) << "\" y=\"" << px(fy(l.y) - 5)
        << "\" fill=\"#555\">" << escape(l.label) << "</text>\n";
  }
  // Series: the line, the points, then the CI bars with caps on top, so a short interval still shows.
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    const char* color = kColors[k % (sizeof kColors / sizeof *kColors)];
    auto ok = [&](std::size_t i) { return i < s.y.size() && finite(s.x[i]) && finite(s.y[i]) && (!log_x || s.x[i] > 0); };
    if (s.line) {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (std::size_t i = 0; i < s.x.size(); ++i)
        if (ok(i)) svg << px(fx(s.x[i])) << "," << px(fy(s.y[i])) << " ";
      svg << "\"/>\n";
    }
    for (std::size_t i = 0; i < s.x.size() && s.points; ++i)
      if (ok(i)) svg << "<circle cx=\"" << px(fx(s.x[i])) << "\" cy=\"" << px(fy(s.y[i])) << "\" r=\"3\" fill=\"" << color << "\"/>\n";
    for (std::size_t i = 0; i < s.x.size() && i < s.y_low.size() && i < s.y_high.size(); ++i) {
      if (!ok(i) || !finite(s.y_low[i]) || !finite(s.y_high[i])) continue;
      const double x = fx(s.x[i]), lo = fy(s.y_low[i]), hi = fy(s.y_high[i]);
      svg << "<path class=\"ci\" d=\"M" << px(x) << "," << px(lo) << "V" << px(hi) << "M" << px(x - 5) << "," << px(lo) << "H"
          << px(x + 5) << "M" << px(x - 5) << "," << px(hi) << "H" << px(x + 5) << "\" stroke=\"" << color
          << "\" stroke-width=\"1.5\" fill=\"none\"/>\n";
    }
  }
  // Markers: the line and its label, labels stacked so two markers never overlap.
  for (std::size_t i = 0; i < plot.markers.size(); ++i) {
    const auto& m = plot.markers[i];
    if (!placeable(m.x)) continue;
    const double x = fx(m.x);
    svg << "<line x1=\"" << px(x) << "\" y1=\"" << px(kTop) << "\" x2=\"" << px(x) << "\" y2=\"" << px(plot_bottom)
        << "\" stroke=\"#333\"" << (m.dashed ? " stroke-dasharray=\"5,4\"" : "") << "/>\n";
    const bool right_half = x > (kLeft + plot_right) / 2;
    svg << "<text class=\"marker\" x=\"" << px(right_half ? x - 5 : x + 5) << "\" y=\"" << px(kTop + 14 + 15 * static_cast<double>(i))
        << "\" text-anchor=\"" << (right_half ? "end" : "start") << "\">" << escape(m.label) << "</text>\n";
  }
  // Legend: a swatch per labelled series, in a box at the top right.
  std::vector<std::size_t> labelled;
  std::size_t widest = 0;
  for (std::size_t k = 0; k < plot.series.size(); ++k)
    if (!plot.series[k].label.empty()) labelled.push_back(k), widest = std::max(widest, plot.series[k].label.size());
  if (!labelled.empty()) {
    // The corner that hides the fewest points and interval ends.
    const double w = 34 + 6.6 * static_cast<double>(widest), h = 8 + 17 * static_cast<double>(labelled.size());
    const double top_y = kTop + 6 + 15 * static_cast<double>(plot.markers.size()), bottom_y = plot_bottom - h - 6;
    const std::array<std::pair<double, double>, 4> corners{
        {{plot_right - w - 6, top_y}, {kLeft + 6, top_y}, {plot_right - w - 6, bottom_y}, {kLeft + 6, bottom_y}}};
    std::size_t best = 0, fewest = SIZE_MAX;
    for (std::size_t c = 0; c < corners.size(); ++c) {
      std::size_t hidden = 0;
      auto inside = [&](double x, double y) {
        return x >= corners[c].first - 4 && x <= corners[c].first + w + 4 && y >= corners[c].second - 4 && y <= corners[c].second + h + 4;
      };
      for (const auto& s : plot.series)
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
          if (!finite(s.x[i]) || !finite(s.y[i]) || (log_x && s.x[i] <= 0)) continue;
          hidden += inside(fx(s.x[i]), fy(s.y[i]));
          if (i < s.y_low.size() && finite(s.y_low[i])) hidden += inside(fx(s.x[i]), fy(s.y_low[i]));
          if (i < s.y_high.size() && finite(s.y_high[i])) hidden += inside(fx(s.x[i]), fy(s.y_high[i]));
        }
      if (hidden < fewest) fewest = hidden, best = c;
    }
    const double left = corners[best].first, top = corners[best].second;
    svg << "<rect x=\"" << px(left) << "\" y=\"" << px(top) << "\" width=\"" << px(w) << "\" height=\"" << px(h)
        << "\" fill=\"white\" opacity=\"0.9\" stroke=\"#ccc\"/>\n";
    for (std::size_t j = 0; j < labelled.size(); ++j) {
      const std::size_t k = labelled[j];
      const char* color = kColors[k % (sizeof kColors / sizeof *kColors)];
      const double y = top + 15 + 17 * static_cast<double>(j);
      if (plot.series[k].line)
        svg << "<line x1=\"" << px(left + 6) << "\" y1=\"" << px(y - 4) << "\" x2=\"" << px(left + 24) << "\" y2=\"" << px(y - 4)
            << "\" stroke=\"" << color << "\" stroke-width=\"2\"/>\n";
      if (plot.series[k].points)
        svg << "<circle cx=\"" << px(left + 15) << "\" cy=\"" << px(y - 4) << "\" r=\"3\" fill=\"" << color << "\"/>\n";
      svg << "<text class=\"legend\" x=\"" << px(left + 30) << "\" y=\"" << px(y) << "\">" << escape(plot.series[k].label) << "</text>\n";
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string plot_svg_stack(const std::vector<Plot>& plots) {
  std::vector<std::string> panels;
  double height = 0;
  for (const Plot& p : plots) {
    panels.push_back(plot_svg(p));
    const std::string& svg = panels.back();
    const auto at = svg.find("height=\"") + 8;  // each panel says its own height (slanted labels make it taller)
    height += std::stod(svg.substr(at, svg.find('"', at) - at));
  }
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << px(kWidth) << "\" height=\"" << px(height) << "\">\n";
  double y = 0;
  for (const std::string& svg : panels) {
    const auto at = svg.find("height=\"") + 8;
    const double h = std::stod(svg.substr(at, svg.find('"', at) - at));
    // The panel as it is, moved down: its root element gains a y.
    out << "<svg y=\"" << px(y) << "\"" << svg.substr(4);
    y += h;
  }
  out << "</svg>\n";
  return out.str();
}

}  // namespace ctwin
