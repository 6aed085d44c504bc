#include "report/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ctwin {
namespace {

constexpr double kWidth = 720, kHeight = 440, kLeft = 80, kRight = 30, kTop = 50, kBottom = 60;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string number(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", v);
  return buffer;
}

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

}  // namespace

std::string plot_svg(const Plot& plot) {
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const auto& s : plot.series)
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      x_min = std::min(x_min, s.x[i]);
      x_max = std::max(x_max, s.x[i]);
      y_min = std::min(y_min, i < s.y_low.size() ? s.y_low[i] : s.y[i]);
      y_max = std::max(y_max, i < s.y_high.size() ? s.y_high[i] : s.y[i]);
    }
  const bool categories = !plot.x_labels.empty();
  const double extra = categories ? 90 : 0;  // room for slanted category names
  const double height = kHeight + extra, bottom = kBottom + extra;
  if (categories) {
    x_min = -0.5;
    x_max = static_cast<double>(plot.x_labels.size()) - 0.5;
  }
  if (!(x_max > x_min)) x_max = x_min + 1;
  const bool log_y = plot.log_y && y_min > 0;
  if (log_y) {
    y_min = std::pow(10, std::floor(std::log10(y_min)));
    y_max = std::pow(10, std::ceil(std::log10(y_max)));
    if (!(y_max > y_min)) y_max = y_min * 10;
  } else {
    if (!(y_max > y_min)) y_max = y_min + 1e-3;
    const double pad = (y_max - y_min) * 0.08;
    y_min -= pad;
    y_max += pad;
  }
  const bool log_x = plot.log_x && x_min > 0 && !categories;
  auto fx = [&](double x) {
    const double u = log_x ? (std::log(x) - std::log(x_min)) / (std::log(x_max) - std::log(x_min)) : (x - x_min) / (x_max - x_min);
    return kLeft + u * (kWidth - kLeft - kRight);
  };
  auto fy = [&](double y) {
    const double u = log_y ? (std::log(y) - std::log(y_min)) / (std::log(y_max) - std::log(y_min)) : (y - y_min) / (y_max - y_min);
    return height - bottom - u * (height - kTop - bottom);
  };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << kWidth / 2 << "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" << escape(plot.title) << "</text>\n";
  // Axes and ticks.
  svg << "<line x1=\"" << kLeft << "\" y1=\"" << height - bottom << "\" x2=\"" << kWidth - kRight << "\" y2=\""
      << height - bottom << "\" stroke=\"black\"/>\n<line x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft
      << "\" y2=\"" << height - bottom << "\" stroke=\"black\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double u = i / 5.0;
    const double x = log_x ? std::exp(std::log(x_min) + u * (std::log(x_max) - std::log(x_min))) : x_min + u * (x_max - x_min);
    const double y = log_y ? std::exp(std::log(y_min) + u * (std::log(y_max) - std::log(y_min))) : y_min + u * (y_max - y_min);
    if (!categories)
      svg << "<text x=\"" << fx(x) << "\" y=\"" << height - bottom + 18 << "\" text-anchor=\"middle\">" << number(x) << "</text>\n";
    svg << "<text x=\"" << kLeft - 8 << "\" y=\"" << fy(y) + 4 << "\" text-anchor=\"end\">" << number(y) << "</text>\n";
    svg << "<line x1=\"" << kLeft << "\" y1=\"" << fy(y) << "\" x2=\"" << kWidth - kRight << "\" y2=\"" << fy(y)
        << "\" stroke=\"#eee\"/>\n";
  }
  for (std::size_t i = 0; i < plot.x_labels.size(); ++i)
    svg << "<text transform=\"translate(" << fx(static_cast<double>(i)) + 4 << "," << height - bottom + 12
        << ") rotate(-40)\" text-anchor=\"end\" font-size=\"11\">" << escape(plot.x_labels[i]) << "</text>\n";
  svg << "<text x=\"" << (kLeft + kWidth - kRight) / 2 << "\" y=\"" << height - 18 << "\" text-anchor=\"middle\">"
      << escape(plot.x_label) << "</text>\n";
  svg << "<text transform=\"translate(18," << (kTop + height - bottom) / 2 << ") rotate(-90)\" text-anchor=\"middle\">"
      << escape(plot.y_label) << "</text>\n";
  // Series: CI bars, line, points, legend.
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const auto& s = plot.series[k];
    const char* color = kColors[k % (sizeof kColors / sizeof *kColors)];
    for (std::size_t i = 0; i < s.x.size() && i < s.y_low.size() && i < s.y_high.size(); ++i)
      svg << "<line x1=\"" << fx(s.x[i]) << "\" y1=\"" << fy(s.y_low[i]) << "\" x2=\"" << fx(s.x[i]) << "\" y2=\""
          << fy(s.y_high[i]) << "\" stroke=\"" << color << "\" opacity=\"0.5\"/>\n";
    if (s.line) {
      svg << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2\" points=\"";
      for (std::size_t i = 0; i < s.x.size(); ++i) svg << fx(s.x[i]) << "," << fy(s.y[i]) << " ";
      svg << "\"/>\n";
    }
    for (std::size_t i = 0; i < s.x.size(); ++i)
      svg << "<circle cx=\"" << fx(s.x[i]) << "\" cy=\"" << fy(s.y[i]) << "\" r=\"3\" fill=\"" << color << "\"/>\n";
    if (!s.label.empty())
      svg << "<text x=\"" << kWidth - kRight - 8 << "\" y=\"" << kTop + 16 * static_cast<double>(k + 1)
          << "\" text-anchor=\"end\" fill=\"" << color << "\">" << escape(s.label) << "</text>\n";
  }
  if (plot.marker_x) {
    const double x = fx(*plot.marker_x);
    svg << "<line x1=\"" << x << "\" y1=\"" << kTop << "\" x2=\"" << x << "\" y2=\"" << height - bottom
        << "\" stroke=\"black\" stroke-dasharray=\"5,4\"/>\n<text x=\"" << x + 5 << "\" y=\"" << kTop + 14 << "\">"
        << escape(plot.marker_label) << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace ctwin
