// Golden outputs: the features fixture's JSON report and trial 0's event log, byte for byte.
// Same scenario and seed must give the same report; a change in the model shows up here first.
// To accept an intended change: copy the `.actual` files the failure names over the golden ones.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "models/scenario_loader.hpp"
#include "report/run_report.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(CTWIN_TEST_DIR) + "/golden/" + name;
  const std::string expected = slurp(path);
  if (expected != actual) std::ofstream(path + ".actual", std::ios::binary) << actual;
  INFO("differs from " << path << "; the new output is in " << path << ".actual");
  CHECK(expected == actual);
}

}  // namespace

TEST_CASE("golden report and event log of the features fixture", "[golden]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  RunOptions options = test::run_options(8, 2026);
  options.record_events = true;
  const RunResult result = run_trials(scenario, options);
  const RunReportInput report{scenario, options, result};
  check_golden("features_report.json", report_json(report));
  check_golden("features_events.csv", trial_event_log(scenario, result.recorded_events, result.recorded));

  // The SimGrid engine writes the same log (the fixture's storage has no contention to see).
  options.engine = EngineKind::Simgrid;
  const RunResult simgrid = run_trials(scenario, options);
  check_golden("features_events.csv", trial_event_log(scenario, simgrid.recorded_events, simgrid.recorded));
}
