// `ctwin validate`: a run's event log held against simulated trials of the same period. The twin
// that wrote a log finds it inside its intervals; a twin with a wrong rate does not; logs that
// say less (no ledger, unnamed classes) or say it wrongly are reported as such.
#include <catch2/catch.hpp>

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibration/observed_run.hpp"
#include "core/text_records.hpp"
#include "calibration/validation.hpp"
#include "report/run_report.hpp"
#include "report/validation_report.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;
namespace fs = std::filesystem;

namespace {

//! 64 nodes for 30 days: GPUs crash at 2/GPU-year (Xid 79), nodes at 3/node-year, with spares.
nlohmann::json fleet() {
  nlohmann::json s = test::read_json(test::fixture("minimal.json"));
  s["name"] = "validate";
  s["cluster"]["nodes"] = 70;
  s["cluster"]["spare_nodes"] = 6;
  s["job"] = {{"nodes", 64}, {"step_time", "10s"}, {"horizon", "30d"}};
  s["faults"] = nlohmann::json::array(
      {{{"name", "gpu_xid79"}, {"rate", "2/gpu-year"}, {"effect", "crash"}, {"xid", 79}, {"detection", "10s"},
        {"recovery", {{"action", "replace"}, {"duration", "10min"}}}},
       {{"name", "node_crash"}, {"rate", "3/node-year"}, {"effect", "crash"}, {"detection", "30s"},
        {"recovery", {{"action", "reboot"}, {"duration", "5min"}}}}});
  return s;
}

//! Trial 0 of `seed`, as `ctwin run --events` writes it.
std::string event_log_of(const Scenario& scenario, std::uint64_t seed) {
  RunOptions options = test::run_options(1, seed);
  options.record_events = true;
  const RunResult r = run_trials(scenario, options);
  return trial_event_log(scenario, r.recorded_events, r.trials.front());
}

nlohmann::ordered_json validate_text(const Scenario& scenario, const std::string& log_text, int trials = 200) {
  std::istringstream in(log_text);
  const calib::ObservedRun observed = calib::observe_run(read_event_log(in, "run.csv"));
  ValidateOptions options;
  options.run = test::run_options(trials, 11);
  return validate_against(over_traced_period(scenario, observed), observed, options);
}

//! A row of the report's first verdict (a scenario with every rate exact has one).
const nlohmann::ordered_json& row(const nlohmann::ordered_json& report, const std::string& metric, const std::string& cls = "",
                                  std::size_t verdict = 0) {
  for (const auto& r : report["verdicts"][verdict]["rows"])
    if (r["metric"] == metric && (cls.empty() ? !r.contains("class") : r.value("class", "") == cls)) return r;
  FAIL("no row " << metric << " " << cls);
  return report;
}

}  // namespace

TEST_CASE("validate: runs of the twin fall inside its intervals about as often as the confidence says", "[validate]") {
  const Scenario scenario = test::scenario_from(fleet());
  int inside = 0, judged = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto report = validate_text(scenario, event_log_of(scenario, seed), 100);
    for (const char* metric : {"interruptions_per_day", "ettr", "lost_gpu_hours"}) {
      ++judged;
      inside += row(report, metric)["verdict"] == "inside";
    }
  }
  // 95% intervals from 100 trials: about 57 of 60; far fewer would mean the comparison is biased.
  CHECK(inside >= 51);
}

TEST_CASE("validate: a run judged by a twin with the wrong rate is outside, class by class", "[validate]") {
  const Scenario truth = test::scenario_from(fleet());
  // One run of the truth: each of its rows is inside 95 % of the time; seed 1 is such a run (under
  // PCG64 streams seeds 1, 2, 4-7 are; 3 puts the run's ETTR just outside).
  const std::string log = event_log_of(truth, 1);
  const auto right = validate_text(truth, log);
  CHECK(right["trace"]["has_ledger"] == true);
  CHECK(right["trace"]["wall_days"].get<double>() == Approx(30));
  CHECK(row(right, "interruptions_per_day", "gpu_xid79")["verdict"] == "inside");
  CHECK(row(right, "interruptions_per_day", "node_crash")["verdict"] == "inside");
  // Six spares for 64 nodes under a 2-day repair: the job waits, and ETTR shows it.
  CHECK(row(right, "ettr")["verdict"] == "inside");
  CHECK(row(right, "waiting_for_spares")["observed"].get<double>() > 0);

  nlohmann::json wrong = fleet();
  wrong["faults"][0]["rate"] = "8/gpu-year";
  const auto judged = validate_text(test::scenario_from(wrong), log);
  CHECK(row(judged, "interruptions_per_day", "gpu_xid79")["verdict"] == "outside");
  CHECK(row(judged, "interruptions_per_day", "gpu_xid79")["percentile"].get<double>() < 2.5);
  CHECK(row(judged, "interruptions_per_day", "node_crash")["verdict"] == "inside");
  CHECK(row(judged, "interruptions_per_day")["verdict"] == "outside");
  CHECK(row(judged, "job_mttf")["verdict"] == "outside");
  CHECK(row(judged, "job_mttf")["percentile"].get<double>() > 97.5);  // the run failed less often than this twin says
}

TEST_CASE("validate: what a log does not say is not judged, a class the scenario lacks is outside", "[validate]") {
  const Scenario scenario = test::scenario_from(fleet());
  std::istringstream full(event_log_of(scenario, 5));
  std::string text, line;
  while (std::getline(full, line)) {
    if (line.find(",ledger,") != std::string::npos) continue;
    text += line + "\n";
  }
  text += "86400.000000,node-3,,interrupted,,cosmic_ray\n";
  const auto report = validate_text(scenario, text, 50);
  CHECK(report["trace"]["has_ledger"] == false);
  CHECK(row(report, "ettr")["verdict"] == "not in trace");
  CHECK(row(report, "ettr")["observed"].is_null());
  CHECK(row(report, "interruptions_per_day", "cosmic_ray")["verdict"] == "outside");
  CHECK(report["trace"]["classes_not_in_scenario"][0]["class"] == "cosmic_ray");
  CHECK(report["verdicts"].size() == 1);  // no rate is uncertain: the two questions are one
  CHECK(report["verdicts"][0]["questions"] == nlohmann::ordered_json::array({"produced", "behaves"}));
  CHECK(report["verdicts"][0]["summary"]["judged"].get<int>() < static_cast<int>(report["verdicts"][0]["rows"].size()));
  // The table says it in words, with each figure's unit: no JSON in it.
  const std::string table = validation_text(report);
  INFO(table);
  CHECK(table.find("the trace names classes the scenario lacks: cosmic_ray (1 interruption)") != std::string::npos);
  CHECK(table.find("[{") == std::string::npos);
  CHECK(table.find(" unit ") != std::string::npos);
  CHECK(table.find("GPU-hours of work redone") != std::string::npos);

  // A ledger with a category missing, or one that does not add up, is bad input naming its line.
  std::istringstream partial("time_s,node,gpu,kind,code,detail\n0,,,running,,\n10,,,end,,\n10,,,ledger,,productive=10.000000\n");
  CHECK_THROWS_WITH(calib::observe_run(read_event_log(partial, "p.csv")), Catch::Contains("line 4") && Catch::Contains("1 of its 11"));
  std::ostringstream off;
  off << "time_s,node,gpu,kind,code,detail\n0,,,running,,\n10,,,end,,\n";
  for (const char* key : kCategoryKeys) off << "10,,,ledger,," << key << "=" << (std::string(key) == "productive" ? "9" : "0") << "\n";
  std::istringstream off_in(off.str());
  CHECK_THROWS_WITH(calib::observe_run(read_event_log(off_in, "o.csv")), Catch::Contains("adds up to 9"));
}

TEST_CASE("ctwin validate: calibrate, then validate the calibrated twin against the same run, bad traces exit 2", "[validate][cli][process]") {
  const fs::path dir = fs::temp_directory_path() / ("ctwin-validate-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string scenario = (dir / "truth.json").string(), events = (dir / "events.csv").string();
  const std::string calibrated = (dir / "calibrated.json").string(), report = (dir / "validate.json").string();
  std::ofstream(scenario) << fleet().dump(2);
  REQUIRE(test::run_ctwin("run " + scenario + " --trials 1 --seed 2 --events " + events).first == 0);
  REQUIRE(test::run_ctwin("calibrate " + events + " --base " + scenario + " --out " + calibrated).first == 0);
  // Every repair in the log took the scenario's fixed 2 days: a fixed turnaround, not a lognormal of spread 0.
  CHECK(test::read_json(calibrated)["spares"]["repair_time"] == "172800s");
  const auto [code, out] = test::run_ctwin("validate " + calibrated + " --against " + events + " --trials 100 --json " + report);
  INFO(out);
  REQUIRE(code == 0);
  CHECK(out.find("interruptions per day") != std::string::npos);
  const auto r = test::read_json(report);
  CHECK(r["command"] == "validate");
  for (const auto& x : r["verdicts"][0]["rows"])
    if (x["metric"] == "interruptions_per_day" && !x.contains("class")) CHECK(x["verdict"] == "inside");

  // Not an event log; an event log where nothing parses; a ledger that does not add up: exit 2, nothing written.
  const std::string out_json = (dir / "bad.json").string();
  std::ofstream(dir / "incidents.csv") << "class,count,exposure,unit\ngpu,3,100,gpu-days\n";
  std::ofstream(dir / "junk.csv") << "time_s,node,gpu,kind,code,detail\nnot,a,valid,row\n";
  std::ofstream(dir / "torn.csv") << "time_s,node,gpu,kind,code,detail\n0,,,running,,\n5,,,end,,\n5,,,ledger,,restart=5\n";
  for (const char* bad : {"incidents.csv", "junk.csv", "torn.csv", "missing.csv"}) {
    const auto [bad_code, why] = test::run_ctwin("validate " + scenario + " --against " + (dir / bad).string() + " --json " + out_json);
    INFO(bad << ": " << why);
    CHECK(bad_code == 2);
    CHECK(why.find(bad) != std::string::npos);
    CHECK_FALSE(fs::exists(out_json));
  }
  fs::remove_all(dir);
}

TEST_CASE("validate: one node's live log against a many-node job is said to be out of scope", "[validate]") {
  const Scenario scenario = test::scenario_from(fleet());  // a 64-node job
  // A live supervisor's log: its start row says it is one node's.
  const std::string log =
      "time_s,node,gpu,kind,code,detail\n"
      "0.000000,node-0,,start,,utc=2026-11-24T07:00:00.000000Z host=gpu-0\n"
      "0.100000,node-0,,running,,\n"
      "86400.000000,node-0,,end,,\n";
  const auto report = validate_text(scenario, log, 20);
  REQUIRE(report["trace"].contains("warning"));
  CHECK(report["trace"]["warning"].get<std::string>().find("one node's live log") != std::string::npos);
  CHECK(report["trace"]["start"] == "utc=2026-11-24T07:00:00.000000Z host=gpu-0");
  // The twin's own log (no start row) raises no such warning.
  const auto own = validate_text(scenario, event_log_of(scenario, 3), 20);
  CHECK_FALSE(own["trace"].contains("warning"));
  // A job master's log says the job's width: the scenario's is fine, another is said.
  std::string master = log;
  const auto host = master.find(" host=gpu-0");
  master.replace(host, 11, " host=m job=j nodes=64");
  CHECK_FALSE(validate_text(scenario, master, 20)["trace"].contains("warning"));
  master.replace(master.find("nodes=64"), 8, "nodes=8");
  const auto smaller = validate_text(scenario, master, 20);
  CHECK(smaller["trace"]["warning"].get<std::string>().find("a job of 8 nodes") != std::string::npos);
  // GPU-hours are the scenario's GPUs times hours, for the log too, and the report says so.
  const std::string scaling = row(smaller, "lost_gpu_hours")["note"].get<std::string>();
  CHECK(scaling.find("the scenario's 512 GPUs (64 nodes x 8)") != std::string::npos);
  CHECK(scaling.find("the trace's job ran on 8 nodes") != std::string::npos);
  CHECK(validation_text(smaller).find("GPU-hours: hours x the scenario's 512 GPUs") != std::string::npos);
}

TEST_CASE("validate: two questions when rates are uncertain, and the fleet-behaviour one fails a fleet the spread covers", "[validate]") {
  // The truth: a fleet at four times the scenario's GPU rate. The scenario says fleets differ by a
  // lognormal sigma of 1.5: such a fleet is one it could have produced, not one that behaves as its
  // rates say.
  nlohmann::json truth = fleet();
  truth["faults"][0]["rate"] = "8/gpu-year";
  const std::string log = event_log_of(test::scenario_from(truth), 4);
  nlohmann::json spread = fleet();
  spread["faults"][0]["rate_uncertainty"] = {{"sigma", 1.5}};
  const auto report = validate_text(test::scenario_from(spread), log, 200);
  REQUIRE(report["verdicts"].size() == 2);
  CHECK(report["rates_uncertain"] == true);
  CHECK(report["verdicts"][0]["questions"][0] == "produced");
  CHECK(report["verdicts"][0]["rates"] == "drawn");
  CHECK(report["verdicts"][1]["questions"][0] == "behaves");
  CHECK(report["verdicts"][1]["rates"] == "exact");
  CHECK(row(report, "interruptions_per_day", "gpu_xid79", 0)["verdict"] == "inside");
  CHECK(row(report, "interruptions_per_day", "gpu_xid79", 1)["verdict"] == "outside");
  const std::string table = validation_text(report);
  CHECK(table.find("could this scenario have produced this run?") != std::string::npos);
  CHECK(table.find("does this fleet behave as the scenario's rates say?") != std::string::npos);
  // One question asked, one verdict.
  std::istringstream in(log);
  const calib::ObservedRun observed = calib::observe_run(read_event_log(in, "run.csv"));
  ValidateOptions options;
  options.run = test::run_options(50, 11);
  options.questions = {ValidationQuestion::Behaves};
  const auto one = validate_against(over_traced_period(test::scenario_from(spread), observed), observed, options);
  REQUIRE(one["verdicts"].size() == 1);
  CHECK(one["verdicts"][0]["rates"] == "exact");
}

TEST_CASE("ctwin validate: the default's p5 run could have come from it, and its fleet does not behave as its rates say", "[validate][cli][process]") {
  // The default knows no fleet: its p5 run is a fleet drawn at several times the median's rates
  // (issue 48). The rates-drawn verdict has it inside; the rates-exact one, outside.
  const fs::path dir = fs::temp_directory_path() / ("ctwin-validate-p5-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string scenario = test::repo_file("scenarios/default.json"), events = (dir / "p5.csv").string(), report = (dir / "v.json").string();
  REQUIRE(test::run_ctwin("run " + scenario + " --trials 200 --timeline-trial p5 --events " + events).first == 0);
  const auto [code, out] = test::run_ctwin("validate " + scenario + " --against " + events + " --trials 200 --json " + report);
  INFO(out);
  REQUIRE(code == 0);
  const auto r = test::read_json(report);
  fs::remove_all(dir);
  REQUIRE(r["verdicts"].size() == 2);
  auto verdict_of = [&](std::size_t v, const char* metric) {
    for (const auto& row : r["verdicts"][v]["rows"])
      if (row["metric"] == metric && !row.contains("class")) return row["verdict"].get<std::string>();
    return std::string("missing");
  };
  CHECK(verdict_of(0, "ettr") == "inside");
  CHECK(verdict_of(0, "interruptions_per_day") == "inside");
  CHECK(verdict_of(1, "ettr") == "outside");
  CHECK(verdict_of(1, "interruptions_per_day") == "outside");
  CHECK(r["verdicts"][1]["summary"]["outside"].get<int>() > r["verdicts"][0]["summary"]["outside"].get<int>() + 10);
}
