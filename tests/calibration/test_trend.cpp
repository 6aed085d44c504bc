// Trends (issue 37, item 4): Laplace's test over windows of exposure, per class and for the fleet.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_01.hpp>

#include "calibration/calibrate.hpp"
#include "calibration/estimators.hpp"

using namespace ctwin::calib;

namespace {

//! Days since 2024-01-01 as an ISO 8601 time, as journalctl -o short-iso writes it.
std::string stamp(double day) {
  using namespace std::chrono;
  const auto s = static_cast<long long>(day * 86400);
  const year_month_day date{sys_days{2024y / January / 1} + std::chrono::days{s / 86400}};
  char text[48];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02lld:%02lld:%02lld+0000", static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), s / 3600 % 24, s / 60 % 60, s % 60);
  return text;
}

//! A year's kernel journal of 200 hosts x 8 GPUs, Xid 79 at `per_quarter[q]` faults in quarter q
//! (a Poisson process, times uniform within their quarter).
nlohmann::ordered_json calibrate_year(const std::vector<int>& per_quarter, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("ctwin-trend-" + name + "-" + std::to_string(::getpid()) + ".journal");
  boost::random::mt19937 rng(37);
  boost::random::uniform_01<double> uniform;
  {
    std::ofstream out(path);
    for (int host = 0; host < 200; ++host) out << stamp(0) << " h" << host << " kernel: Linux version 6.1\n";
    for (int q = 0; q < 4; ++q)
      for (int i = 0; i < per_quarter[static_cast<std::size_t>(q)]; ++i) {
        const int host = static_cast<int>(uniform(rng) * 200), gpu = static_cast<int>(uniform(rng) * 8);
        out << stamp(90 * (q + uniform(rng))) << " h" << host << " kernel: NVRM: Xid (PCI:0000:" << 10 + gpu << ":00): 79, GPU has fallen off the bus.\n";
      }
    for (int host = 0; host < 200; ++host) out << stamp(360) << " h" << host << " systemd[1]: Started daily clean-up.\n";
  }
  const CalibrationResult r = calibrate({path.string()}, CalibrateOptions{});
  std::filesystem::remove(path);
  return r.report;
}

}  // namespace

TEST_CASE("trend: Laplace's test finds a rising rate, and none in a constant one", "[calibration]") {
  const std::vector<std::pair<double, double>> year{{0, 100}};
  std::vector<double> constant, rising;
  for (int i = 0; i < 200; ++i) {
    const double u = (i + 0.5) / 200;
    constant.push_back(100 * u);
    rising.push_back(100 * std::sqrt(u));  // intensity growing linearly in time
  }
  const auto flat = laplace_trend(constant, year);
  REQUIRE(flat);
  CHECK(std::abs(flat->statistic) < 0.01);
  CHECK(flat->p_value > 0.99);
  const auto up = laplace_trend(rising, year);
  REQUIRE(up);
  CHECK(up->statistic > 5);
  CHECK(up->p_value < 1e-6);
  CHECK_FALSE(laplace_trend({1, 2, 3, 4}, year));  // too few events to say
}

TEST_CASE("trend: hosts observed over different windows are not a trend", "[calibration]") {
  // Host A seen over days 0-100, host B joins at day 50; both fail at one a day throughout. Taken
  // over one window, twice the faults late would read as a rising rate; over their exposure, none.
  std::vector<double> times;
  for (int d = 0; d < 100; ++d) times.push_back(d + 0.5);
  for (int d = 50; d < 100; ++d) times.push_back(d + 0.5);
  const auto fair = laplace_trend(times, {{0, 100}, {50, 100}});
  REQUIRE(fair);
  CHECK(std::abs(fair->statistic) < 0.05);
  const auto naive = laplace_trend(times, {{0, 100}});
  REQUIRE(naive);
  CHECK(naive->statistic > 3);
}

TEST_CASE("trend: a fleet whose faults rise quarter on quarter is reported and warned about", "[calibration]") {
  // Titan's GPU failures rose 66, 282, 724, 846 a quarter (issue 37); a tenth of that here.
  const auto rising = calibrate_year({7, 28, 72, 85}, "rising");
  REQUIRE(rising.contains("trend"));
  CHECK(rising["trend"]["direction"] == "rising");
  CHECK(rising["trend"]["significant"] == true);
  CHECK(rising["trend"]["warning"].get<std::string>().find("rising") != std::string::npos);
  REQUIRE(rising["classes"].size() == 1);
  CHECK(rising["classes"][0]["trend"]["significant"] == true);
  CHECK(rising["classes"][0].contains("trend_warning"));
  // The same number of faults, spread evenly: no trend, no warning.
  const auto even = calibrate_year({48, 48, 48, 48}, "even");
  REQUIRE(even.contains("trend"));
  CHECK(even["trend"]["significant"] == false);
  CHECK_FALSE(even["trend"].contains("warning"));
  CHECK_FALSE(even["classes"][0].contains("trend_warning"));
}

TEST_CASE("power law in time: Crow-AMSAA's shape recovered over windows, and its intensity at the end", "[calibration]") {
  // 40 hosts seen from day 0 (half of them from day 20) to day 60; faults from a per-host intensity
  // l b t^(b - 1), drawn by inverting each window's cumulative intensity.
  boost::random::mt19937_64 rng(7);
  boost::random::uniform_01<double> u;
  const double day = 86400;
  for (const double b : {2.0, 0.6}) {
    DYNAMIC_SECTION("shape " << b) {
      std::vector<double> times;
      std::vector<std::pair<double, double>> windows;
      const double l = 30 / std::pow(60 * day, b);  // about 30 faults a host over the whole span
      for (int host = 0; host < 40; ++host) {
        const double start = host % 2 ? 20 * day : 0, end = 60 * day;
        windows.emplace_back(start, end);
        double hazard = l * std::pow(start, b);
        for (;;) {
          hazard += -std::log(1 - u(rng));
          const double t = std::pow(hazard / l, 1 / b);
          if (t > end) break;
          times.push_back(t);
        }
      }
      const auto fit = fit_power_law(times, windows);
      REQUIRE(fit);
      CHECK(fit->shape == Approx(b).epsilon(0.08));
      CHECK(fit->age == Approx(60 * day));
      // The intensity at the end over count / exposure: l b T^(b - 1) against the window's average.
      double exposure = 0, expected = 0;
      for (const auto& [s, e] : windows) exposure += e - s, expected += l * (std::pow(e, b) - std::pow(s, b));
      CHECK(fit->end_factor == Approx(l * b * std::pow(60 * day, b - 1) / (expected / exposure)).epsilon(0.1));
      CHECK((b > 1 ? fit->end_factor > 1 : fit->end_factor < 1));
    }
  }
  CHECK_FALSE(fit_power_law({1, 2, 3}, {{0, 10}}));  // fewer than 5 events
}
