// Calibration reads event logs as written: the job master's (each row's class is the detail's first
// word, the live note after it), and every class the simulator strikes, fabric parts included
// (their strikes over every part of the fabric, `fault_ignored` ones too). What it leaves out it
// names, with the reason.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "calibration/calibrate.hpp"
#include "models/network_domains.hpp"
#include "models/scenario_loader.hpp"
#include "report/run_report.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;
using namespace ctwin::calib;

namespace {

const nlohmann::ordered_json& class_in(const nlohmann::ordered_json& report, const std::string& name) {
  for (const auto& c : report["classes"])
    if (c["class"] == name) return c;
  FAIL("no class " << name << " in the report");
  return report;
}

}  // namespace

TEST_CASE("calibrate: the twin loop's master log counts every interruption by its class", "[calibration]") {
  CalibrateOptions options;
  options.base = test::repo_file("scenarios/twin_loop.json");
  const CalibrationResult r = calibrate({test::repo_file("tests/traces/twin_loop_job.csv")}, options);
  // Three trainer crashes (software signal 9), a hang, a lost node: five interruptions, all counted.
  CHECK(class_in(r.report, "software")["count"] == 3);
  CHECK(class_in(r.report, "hang")["count"] == 1);
  CHECK(class_in(r.report, "node")["count"] == 1);
  double total = 0;
  for (const auto& c : r.report["classes"]) total += c["count"].get<double>();
  CHECK(total == 5);
  CHECK_FALSE(r.report["traces"][0].contains("classes_skipped"));
  CHECK_FALSE(r.report["traces"][0].contains("warning"));  // the master's log: one fault per interruption
  // One node's own log (its start row names its host only) counts its collateral stops too: said.
  std::ifstream in(test::repo_file("tests/traces/twin_loop_job.csv"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t job = text.find(" job=");
  text.erase(job, text.find('\n', job) - job);
  const std::filesystem::path node = std::filesystem::temp_directory_path() / ("ctwin-node-log-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(node) << text;
  const CalibrationResult one = calibrate({node.string()}, options);
  std::filesystem::remove(node);
  CHECK(one.report["traces"][0]["warning"].get<std::string>().find("one node's live log") != std::string::npos);
  // Two job nodes for the log's span: the exposure the rates stand on.
  CHECK(r.report["traces"][0]["node_hours"].get<double>() == Approx(2 * r.report["traces"][0]["span_hours"].get<double>()).epsilon(0.01));
}

TEST_CASE("calibrate: a job master's log gives the restart its run measured, into the path it took", "[calibration]") {
  CalibrateOptions options;
  options.base = test::repo_file("scenarios/twin_loop.json");
  const CalibrationResult r = calibrate({test::repo_file("tests/traces/twin_loop_job.csv")}, options);
  // The ledger's restart, 0.489207 s, less the start-up to the first `running` row, 0.122815 s, over 5 restarts.
  CHECK(r.report["restarts"]["restarts"] == 5);
  CHECK(r.report["restarts"]["mean_s"].get<double>() == Approx((0.489207 - 0.122815) / 5));
  CHECK(r.scenario["restart"]["overhead"] == "0.0732784s");
  CHECK(r.scenario["restart"]["source"].get<std::string>().find("[M] ctwin calibrate: 5 relaunch restarts") == 0);
  // Restarts that say they went in-process write that path's overhead.
  std::ifstream in(test::repo_file("tests/traces/twin_loop_job.csv"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (std::size_t at = text.find(",restart,,"); at != std::string::npos; at = text.find(",restart,,", at + 1))
    text.insert(text.find('\n', at), " path=in_process");
  const std::filesystem::path log = std::filesystem::temp_directory_path() / ("ctwin-in-process-log-" + std::to_string(::getpid()) + ".csv");
  std::ofstream(log) << text;
  const CalibrationResult ip = calibrate({log.string()}, options);
  std::filesystem::remove(log);
  CHECK(ip.scenario["restart"]["in_process"]["overhead"] == "0.0732784s");
  CHECK(ip.scenario["restart"]["overhead"] == "0.13s");  // the relaunch's, as the base has it
}

TEST_CASE("calibrate: a fabric class's strikes count over every part, and a class the base lacks is named as skipped", "[calibration]") {
  const Scenario scenario = load_scenario(test::fixture("effects.json"));
  RunOptions run = test::run_options(1, 3);
  run.record_events = true;
  const RunResult result = run_trials(scenario, run);
  std::string log = trial_event_log(scenario, result.recorded_events, result.trials.front());
  // A live row whose class the base does not have.
  log.insert(log.find('\n') + 1, "1.000000,node-2,,fault,,gremlin a note after the class\n");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ctwin-live-logs-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "events.csv").string();
  std::ofstream(path) << log;
  CalibrateOptions options;
  options.base = test::fixture("effects.json");
  const CalibrationResult r = calibrate({path}, options);
  std::filesystem::remove_all(dir);

  std::size_t cable_class = 0;
  for (std::size_t i = 0; i < scenario.faults.size(); ++i)
    if (scenario.faults[i].name == "cable") cable_class = i;
  const auto& cable = class_in(r.report, "cable");
  CHECK(cable["component"] == "cable");
  // Every strike the log holds: on a cable a job node uses (fault) or on one it does not (fault_ignored).
  int strikes = 0;
  std::istringstream rows(log);
  for (std::string line; std::getline(rows, line);)
    strikes += (line.find(",fault,,cable ") != std::string::npos || line.find(",fault_ignored,,cable ") != std::string::npos);
  CHECK(cable["count"].get<double>() == strikes);
  CHECK(cable["count"].get<double>() > 0);
  const double cables = static_cast<double>(component_count(scenario, scenario.faults[cable_class]));
  CHECK(cable["exposure_cable_hours"].get<double>() == Approx(cables * 20 * 24).epsilon(1e-3));
  // The rate comes back near the scenario's 0.2 a cable-year.
  CHECK(cable["rate_per_cable_year"]["lower"].get<double>() < 0.2);
  CHECK(cable["rate_per_cable_year"]["upper"].get<double>() > 0.2);
  const auto& skipped = r.report["traces"][0]["classes_skipped"];
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0]["class"] == "gremlin");
  CHECK(skipped[0]["rows"] == 1);
  CHECK(skipped[0]["why"].get<std::string>().find("not a class of the base") != std::string::npos);
}

TEST_CASE("calibrate: a class that names a diagnosis category holds the Xids it covers, and pools with the prior", "[calibration]") {
  // Two hosts' kernel logs: Xid 79 and Xid 74 (NVLink) on one, nothing but its clock on the other.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ctwin-covers-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "gpu-1.dmesg") << "[    1.000000] Linux version 6.1\n"
                                        "[ 3600.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n"
                                        "[ 7200.000000] NVRM: Xid (PCI:0000:5e:00): 74, pid=1, NVLink: fatal error detected\n"
                                        "[864000.000000] systemd[1]: a clean line\n";
  std::ofstream(dir / "gpu-2.dmesg") << "[    1.000000] Linux version 6.1\n[864000.000000] systemd[1]: a clean line\n";
  CalibrateOptions options;
  options.base = test::repo_file("scenarios/default.json");
  options.prior = test::repo_file("scenarios/priors/public_fleets.json");
  const CalibrationResult r = calibrate({(dir / "gpu-1.dmesg").string(), (dir / "gpu-2.dmesg").string()}, options);
  std::filesystem::remove_all(dir);
  CHECK(class_in(r.report, "gpu_faulty")["count"] == 2);  // "Faulty GPU" is more than Xid 79
  // gpu_sram and gpu_thermal: no Xid counts as them, so a kernel log does not see them.
  for (const auto& c : r.report["classes"]) CHECK(c["class"] != "gpu_thermal");
  const auto& pooling = r.report["pooling"];
  CHECK(pooling["prior"].get<std::string>().rfind("public-fleets", 0) == 0);
  REQUIRE(pooling["groups"].size() == 5);
  CHECK(pooling["groups"][0]["group"] == "gpu");
  CHECK(pooling["groups"][0]["observed"] == true);
  CHECK(pooling["groups"][0]["count"] == 2);
  CHECK(pooling["groups"][0]["seen_share"].get<double>() < 1);  // the GPU group's classes a kernel log sees
  CHECK(pooling["groups"][2]["observed"] == false);              // network: the prior, moved by the fleet factor
  // The scenario records the prior, and every grouped class draws from the pooled posterior.
  CHECK(r.scenario["calibration"]["prior"]["name"] == pooling["prior"]);
  for (const auto& f : r.scenario["faults"])
    if (f.contains("group")) {
      CHECK(f["rate_uncertainty"]["prior"] == pooling["prior"]);
      CHECK(f["rate_uncertainty"]["sigma"].get<double>() > 0);
    }
}
