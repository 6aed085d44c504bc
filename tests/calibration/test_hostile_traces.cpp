// Traces that once crashed calibration or became wrong numbers (issue 17): invalid UTF-8, NaN and
// Inf counts and durations, a host list of 10^8 hosts, a Megatron line of 50 KB and an iteration
// beyond `long`. Each is a malformed line (named by number), or exit 2 when nothing else parses.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "calibration/calibrate.hpp"
#include "calibration/evidence.hpp"
#include "calibration/readers/incident_table.hpp"
#include "calibration/readers/slurm_sacct.hpp"
#include "calibration/readers/step_log.hpp"
#include "calibration/readers/xid_log.hpp"
#include "core/event_log.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using namespace ctwin::calib;

TEST_CASE("incident tables: invalid UTF-8, NaN and infinite numbers are malformed rows", "[calibration][hostile]") {
  std::istringstream in(
      "class,count,exposure,unit\n"
      "xid\xff\xfe,3,100,gpu-days\n"
      "nan_count,nan,100,gpu-days\n"
      "inf_exposure,3,inf,gpu-days\n"
      "huge,3,1e400,gpu-days\n"
      "ok,2,100,gpu-days\n");
  const IncidentTable t = read_incident_table(in, "incidents.csv");
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].category == "ok");
  REQUIRE(t.report.malformed.size() == 4);
  CHECK(t.report.malformed[0].reason == "not UTF-8 text");
  for (int i = 1; i < 4; ++i) CHECK(t.report.malformed[static_cast<std::size_t>(i)].reason.find("finite") != std::string::npos);
  std::istringstream only_nan("class,count,exposure,unit\nx,nan,100,gpu-days\n");
  CHECK_THROWS_AS(read_incident_table(only_nan, "nan.csv").report.require_some(), TraceUnreadable);
}

TEST_CASE("incident tables: an unknown effect is refused at its line, with the effects allowed", "[calibration][hostile]") {
  std::istringstream in("class,count,exposure,unit,effect,source\ngpu_x,3,1000,gpu-days,crash,a\ngpu_y,3,1000,gpu-days,cras,b\n");
  CHECK_THROWS_WITH(read_incident_table(in, "incidents.csv"),
                    "incidents.csv: line 3: effect \"cras\" is not one of crash, hang, slow, sdc, flap, none");
}

TEST_CASE("step logs: NaN and Inf durations, and iterations beyond any run, are malformed lines", "[calibration][hostile]") {
  std::istringstream csv("node,duration_s,step\nn1,nan,1\nn1,inf,2\nn1,-inf,3\nn1,1.0,1e300\nn1,1.0,4\n");
  const StepLog log = read_step_csv(csv, "steps.csv");
  REQUIRE(log.records.size() == 1);
  CHECK(log.records[0].step == 4);
  CHECK(log.report.malformed.size() == 4);

  // A 50 KB line recursed std::regex until the stack overflowed; an iteration beyond `long` threw.
  std::ostringstream megatron;
  megatron << " iteration       10/     100 | " << std::string(50'000, 'x') << " | elapsed time per iteration (ms): 1500.0 |\n";
  megatron << " iteration 99999999999999999999999/ 100 | elapsed time per iteration (ms): 1000.0 |\n";
  megatron << " iteration       11/     100 | elapsed time per iteration (ms): nan |\n";
  megatron << " iteration       12/     100 | consumed samples: 3 | elapsed time per iteration (ms): 1234.5 | loss: 2\n";
  std::istringstream in(megatron.str());
  const StepLog m = read_megatron_log(in, "train.log");
  REQUIRE(m.records.size() == 2);
  CHECK(m.records[0].step == 10);
  CHECK(m.records[0].duration_s == Approx(1.5));
  CHECK(m.records[1].step == 12);
  CHECK(m.records[1].duration_s == Approx(1.2345));
  CHECK(m.report.malformed.size() == 2);
}

TEST_CASE("sacct: a host list is counted before it is expanded, and bounded by the job's nodes", "[calibration][hostile]") {
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(expand_hostlist("gpu-[0-99999999]").empty());  // once 14 s and 6.3 GB
  CHECK(expand_hostlist("a[0-999999],b[0-999999]").empty());
  CHECK(expand_hostlist("a[1-3]", 2).empty());
  CHECK(expand_hostlist("a[1-3]", 3).size() == 3);
  CHECK(expand_hostlist("a[99999999999999999999-1]").empty());
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  std::istringstream in("JobID|State|Start|End|NNodes|NodeList|ExitCode\n"
                        "1|NODE_FAIL|2024-01-01T00:00:00|2024-01-02T00:00:00|2|gpu-[0-99999999]|0:0\n"
                        "2|COMPLETED|2024-01-01T00:00:00|2024-01-02T00:00:00|2|gpu-[1-2]|0:0\n");
  const SlurmLog log = read_sacct(in, "sacct.txt");
  REQUIRE(log.jobs.size() == 2);
  CHECK(log.jobs[0].node_list.empty());  // more hosts than the job had: not this job's list
  CHECK(log.jobs[1].node_list == std::vector<std::string>{"gpu-1", "gpu-2"});
}

TEST_CASE("kernel logs: a short zone and invalid UTF-8 are malformed lines, never the end of the read", "[calibration][hostile]") {
  std::istringstream in("2024-03-21T13:34:34+01:0 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x\n"
                        "2024-03-21T13:34:35+01:00 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, \xff\n"
                        "2024-03-21T13:34:36+01:00 gpu-1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, gone\n"
                        "2024-03-21T13:34:37+01:00 gpu-1 root: NVRM: Xid (PCI:0000:3b:00): 79, fake\n");
  const XidLog log = read_xid_log(in, "kern.log", "", 2024);
  REQUIRE(log.events.size() == 1);
  CHECK(log.events[0].xid == 79);
  CHECK(log.report.malformed.size() == 2);
  CHECK(log.report.skipped == 1);  // the user's message is not a kernel record
}

TEST_CASE("calibrate end to end: every input that once broke it calibrates or is refused as bad input", "[calibration][hostile]") {
  // tests/fuzz/seeds/calibrate/: a log of instants (no exposure), seconds of exposure with faults,
  // a dmesg uptime of 9e63 s, an Xid of 4,555,555, sacct jobs whose size regression diverges.
  int seen = 0;
  for (const auto& seed : std::filesystem::directory_iterator(test::repo_file("tests/fuzz/seeds/calibrate"))) {
    INFO(seed.path().string());
    ++seen;
    try {
      const ctwin::calib::CalibrationResult r = ctwin::calib::calibrate({seed.path().string()}, ctwin::calib::CalibrateOptions{});
      CHECK(r.scenario.contains("faults"));
    } catch (const ctwin::BadInput& e) {
      CHECK(std::string(e.what()).find(seed.path().filename().string()) != std::string::npos);  // it names the file
    }
  }
  CHECK(seen >= 5);
}

TEST_CASE("calibrate: faults with no exposure write no rate (never 0), an absurd step time is a malformed line", "[calibration][hostile]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ctwin-hostile-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // One Xid line: a fault, but no window of time it was seen over.
  const std::string one = (dir / "one.dmesg").string();
  std::ofstream(one) << "[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n";
  const CalibrationResult r = calibrate({one}, CalibrateOptions{});
  REQUIRE(r.report["classes"].size() == 1);
  const auto& c = r.report["classes"][0];
  CHECK(c["count"] == 1);
  CHECK_FALSE(c.contains("rate_per_gpu_year"));
  CHECK(c["warning"].get<std::string>().find("no exposure") != std::string::npos);
  for (const auto& f : r.scenario["faults"]) CHECK(f.value("rate", std::string()).rfind("0/", 0) != 0);
  // A step of 2e23 s is past any duration a scenario holds: the line is malformed, the file refused.
  const std::string steps = (dir / "steps.csv").string();
  std::ofstream(steps) << "node,duration_s\nn1,2e23\n";
  CHECK_THROWS_AS(calibrate({steps}, CalibrateOptions{}), TraceUnreadable);
  std::istringstream csv("node,duration_s\nn1,2e23\nn1,1.5\n");
  const StepLog log = read_step_csv(csv, "steps.csv");
  REQUIRE(log.report.malformed.size() == 1);
  CHECK(log.report.malformed[0].reason.find("duration_s") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("event logs: a ledger restart that is no number is refused at its line, not read as 0", "[calibration][hostile]") {
  const Scenario base = load_scenario(test::fixture("minimal.json"));
  auto log_with = [](const std::string& restart) {
    return "time_s,node,gpu,kind,code,detail\n0,,,start,,job=j nodes=2\n1,node-0,,running,,\n5,,,restart,,path=relaunch\n"
           "6,node-0,,running,,\n10,,,end,,\n10,,,ledger,,restart=" + restart + "\n";
  };
  for (const std::string bad : {"abc", "nan", "-1", "1.5s", ""}) {
    std::istringstream in(log_with(bad));
    Evidence evidence;
    INFO(bad);
    CHECK_THROWS_WITH(add_event_log(evidence, read_event_log(in, "job.csv"), base),
                      Catch::Contains("job.csv: line 7") && Catch::Contains("restart is not a non-negative number"));
  }
  std::istringstream good(log_with("2.5"));
  Evidence evidence;
  add_event_log(evidence, read_event_log(good, "job.csv"), base);
  CHECK(evidence.restarts.seconds == Approx(1.5));  // the ledger's 2.5 s less the start-up to the first running row
  CHECK(evidence.restarts.by_path["relaunch"] == 1);
}

TEST_CASE("event logs: a restart its nodes took more slowly than planned counts as the path they took", "[calibration]") {
  const Scenario base = load_scenario(test::fixture("minimal.json"));
  std::istringstream in("time_s,node,gpu,kind,code,detail\n0,,,start,,job=j nodes=2\n1,node-0,,running,,\n"
                        "5,,,restart,,generation=2 restore_step=10 path=warm_standby\n"
                        "6,,,health,,launched generation=2 path=relaunch planned=warm_standby node_ranks=1\n7,node-0,,running,,\n"
                        "9,,,restart,,generation=3 restore_step=20 path=warm_standby\n9.5,node-0,,running,,\n"
                        "10,,,end,,\n10,,,ledger,,restart=4\n");
  Evidence evidence;
  add_event_log(evidence, read_event_log(in, "job.csv"), base);
  CHECK(evidence.restarts.by_path == std::map<std::string, int>{{"relaunch", 1}, {"warm_standby", 1}});
}
