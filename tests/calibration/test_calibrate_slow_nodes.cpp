// A step log's slow nodes in the calibrated scenario (issue 37, item 5): written as a class of slow
// faults when each node was compared with its stage and role, with the share of nodes slow at a
// time the log's; a log that names no stage has its suspects reported, not written, unless asked.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "calibration/calibrate.hpp"
#include "core/units.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using namespace ctwin::calib;

namespace {

const nlohmann::ordered_json* slow_node_class(const CalibrationResult& r) {
  for (const auto& f : r.scenario["faults"])
    if (f.value("name", "") == "slow_node") return &f;
  return nullptr;
}

//! The share of nodes slow at a time the class holds: rate x how long each slowdown lasts.
double share_held(const nlohmann::ordered_json& c) {
  std::string why;
  const double per_year = std::stod(c["rate"].get<std::string>());
  const double lasts_s = *parse_duration_s(c["recovery"]["duration"].get<std::string>(), why);
  return per_year / (24 * 365.0) * lasts_s / 3600;  // a year as rates are read
}

}  // namespace

TEST_CASE("calibrate: a staged step log's slow node goes into the scenario, holding the log's share", "[calibration][unit]") {
  CalibrateOptions options;
  options.base = test::repo_file("scenarios/default.json");
  const CalibrationResult r = calibrate({test::trace_file("node_steps.csv")}, options);
  const auto& said = r.report["step_times"]["scenario"];
  CHECK(said["written"] == true);
  CHECK(said["why"] == "each node compared with its stage and role");
  // Stage 1's nodes are long by design and not slow: one slow node of six.
  REQUIRE(r.report["step_times"]["slow_nodes"].size() == 1);
  const auto* c = slow_node_class(r);
  REQUIRE(c);
  CHECK((*c)["effect"] == "slow");
  CHECK((*c)["speed_factor"].get<double>() == Approx(1 / 1.4).epsilon(0.03));
  CHECK(share_held(*c) == Approx(1.0 / 6).epsilon(1e-4));
  CHECK((*c)["rate_uncertainty"]["events"] == 1.0);
  CHECK_NOTHROW(parse_scenario(r.scenario.dump(), "calibrated"));  // and the forecast takes it
}

TEST_CASE("calibrate: a step log without stages reports its slow nodes but writes them only when asked", "[calibration][unit]") {
  const auto log = std::filesystem::temp_directory_path() / ("ctwin-flat-steps-" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(log);
    out << "node,step,duration_s\n";
    for (int step = 0; step < 30; ++step)
      for (int n = 0; n < 8; ++n) out << "node-" << n << "," << step << "," << (n == 7 ? 1.3 : 1.0) * (1 + 0.001 * ((step * 7 + n) % 5)) << "\n";
  }
  CalibrateOptions options;
  options.base = test::repo_file("scenarios/default.json");
  const CalibrationResult flat = calibrate({log.string()}, options);
  CHECK(flat.report["step_times"]["slow_nodes"].size() == 1);
  CHECK(flat.report["step_times"]["scenario"]["written"] == false);
  CHECK(flat.report["step_times"]["scenario"]["why"].get<std::string>().find("--slow-nodes-without-stages") != std::string::npos);
  CHECK_FALSE(slow_node_class(flat));
  options.slow_nodes_without_stages = true;
  const CalibrationResult forced = calibrate({log.string()}, options);
  std::filesystem::remove(log);
  CHECK(forced.report["step_times"]["scenario"]["written"] == true);
  const auto* c = slow_node_class(forced);
  REQUIRE(c);
  CHECK(share_held(*c) == Approx(1.0 / 8).epsilon(1e-4));
}
