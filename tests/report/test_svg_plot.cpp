// The plot writer's axes: round ticks whatever the data, decades on a log axis, round durations,
// and labels with the fewest digits that tell the ticks apart.
#include <catch2/catch.hpp>

#include <cmath>

#include "report/calibration_report.hpp"
#include "report/svg_plot.hpp"

using namespace ctwin;

TEST_CASE("linear ticks are 1, 2 or 5 times a power of ten and cover the data", "[plot]") {
  const Ticks t = linear_ticks(0.9486, 0.9512);  // a goodput sweep's narrow range
  REQUIRE(t.values.size() >= 3);
  CHECK(t.lo <= 0.9486);
  CHECK(t.hi >= 0.9512);
  const double step = t.values[1] - t.values[0];
  CHECK(step == Approx(0.0005));
  for (double v : t.values) CHECK(std::abs(v / step - std::round(v / step)) < 1e-6);
  CHECK(tick_label(t.values[1], step) == "0.9490");
  CHECK(tick_label(1800, 200) == "1800");
  CHECK(tick_label(-0.0, 0.1) == "0.0");
  // A single value still gets an axis.
  CHECK(linear_ticks(54.62, 54.62).values.size() >= 2);
}

TEST_CASE("log ticks are decades, with 2 and 5 between when there are few", "[plot]") {
  const Ticks wide = log_ticks(0.03, 40);
  CHECK(wide.lo == Approx(0.01));
  CHECK(wide.hi == Approx(100));
  CHECK(wide.values.size() == 5);  // 0.01 .. 100
  const Ticks narrow = log_ticks(3, 40);
  CHECK(narrow.values == std::vector<double>{1, 2, 5, 10, 20, 50, 100});
}

TEST_CASE("duration ticks sit on round durations and read as durations", "[plot]") {
  const Ticks log_axis = duration_ticks(300, 12 * 3600, true);
  REQUIRE(!log_axis.values.empty());
  CHECK(log_axis.values.size() <= 7);
  for (double v : log_axis.values) CHECK((v == 300 || v == 600 || v == 900 || v == 1800 || v == 3600 || v == 7200 || v == 10800 ||
                                          v == 21600 || v == 43200));
  const Ticks linear = duration_ticks(600, 7200, false);
  CHECK(linear.values[1] - linear.values[0] == 1800);
  CHECK(duration_tick_label(1800) == "30 min");
  CHECK(duration_tick_label(5400) == "1.5 h");
  CHECK(duration_tick_label(172800) == "2 d");
  CHECK(duration_tick_label(30) == "30 s");
}

TEST_CASE("a plot with no finite data draws axes and no NaN", "[plot]") {
  Plot plot;
  plot.title = "empty";
  plot.series.push_back({"nothing", {1, 2}, {NAN, INFINITY}, {}, {}, true, true});
  plot.log_x = true;
  plot.markers.push_back({0, "at zero: no place on a log axis", true, std::make_pair(-1.0, 1.0)});
  const std::string svg = plot_svg(plot);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
  CHECK(svg.find("class=\"ytick\"") != std::string::npos);
}

TEST_CASE("lifetime plots: the CDF axis ends a little above the data, so fits at fleet scale stand apart", "[plot]") {
  // Two percent of parts failed in the window: on a 0-to-1 axis every curve lay on the x axis.
  nlohmann::ordered_json report{{"confidence", 0.95}, {"classes", nlohmann::ordered_json::array()}};
  nlohmann::ordered_json c;
  c["class"] = "gpu_hbm";
  c["component"] = "gpu";
  c["rate_per_gpu_year"] = {{"estimate", 0.1}, {"lower", 0.05}, {"upper", 0.2}};
  c["lifetime_cdf"]["hours"] = std::vector<double>{10, 100, 1000};
  c["lifetime_cdf"]["empirical"] = std::vector<double>{0.002, 0.008, 0.02};
  c["lifetime_cdf"]["weibull"] = std::vector<double>{0.002, 0.007, 0.021};
  c["lifetime_cdf"]["exponential"] = std::vector<double>{0.0004, 0.004, 0.04};
  report["classes"].push_back(c);
  std::string svg;
  for (const auto& [name, text] : calibration_plots(report))
    if (name == "lifetimes_gpu_hbm.svg") svg = text;
  REQUIRE_FALSE(svg.empty());
  CHECK(svg.find(">0.04</text>") != std::string::npos);  // a tick at the highest curve's top
  CHECK(svg.find(">1.0</text>") == std::string::npos);   // not the whole 0-to-1 range
  CHECK(svg.find(">0.5</text>") == std::string::npos);
}
