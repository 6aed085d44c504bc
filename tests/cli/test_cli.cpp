// The command line as a user meets it: exit codes, error lines, nothing half-written, and
// byte-identical reports whatever --jobs is.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/fixtures.hpp"

#ifndef CTWIN_BINARY
#error "CTWIN_BINARY must name the ctwin executable"
#endif

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int exit_code;
  std::string output;
};

fs::path scratch() {
  fs::path dir = fs::temp_directory_path() / ("ctwin-cli-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

Outcome run_cli(const std::string& arguments) {
  const fs::path log = scratch() / "output.txt";
  const std::string command = std::string(CTWIN_BINARY) + " " + arguments + " > " + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("check accepts the reference scenarios", "[cli][process]") {
  CHECK(run_cli("check " + ctwin::test::repo_file("scenarios/default.json")).exit_code == 0);
}

TEST_CASE("a bad scenario exits 2 with one line per problem and writes nothing", "[cli][process]") {
  auto doc = ctwin::test::read_json(ctwin::test::fixture("minimal.json"));
  doc["cluster"]["nodes"] = -3;
  doc["faults"][0]["rate"] = "often";
  const fs::path bad = scratch() / "bad.json";
  std::ofstream(bad) << doc.dump(2);
  const fs::path report = scratch() / "report.json";
  fs::remove(report);
  const Outcome out = run_cli("run " + bad.string() + " --json " + report.string());
  CHECK(out.exit_code == 2);
  CHECK(out.output.find(bad.string() + ": /cluster/nodes: must be between 1") != std::string::npos);
  CHECK(out.output.find(bad.string() + ": /faults/0/rate: expected a number") != std::string::npos);
  CHECK_FALSE(fs::exists(report));
}

TEST_CASE("an output path in a missing directory exits 2 before running", "[cli][process]") {
  const Outcome out = run_cli("run " + ctwin::test::fixture("minimal.json") + " --json /nonexistent-dir/r.json");
  CHECK(out.exit_code == 2);
  CHECK(out.output.find("does not exist") != std::string::npos);
  CHECK(run_cli("run --engine warp").exit_code == 2);
}

TEST_CASE("run --engine both: SimGrid's report and the native engine's approximation error", "[cli][process]") {
  const fs::path report = scratch() / "both.json";
  const Outcome out = run_cli("run " + ctwin::test::fixture("features.json") + " --trials 6 --engine both --json " + report.string());
  REQUIRE(out.exit_code == 0);
  CHECK(out.output.find("simgrid engine") != std::string::npos);
  CHECK(out.output.find("native approximation error (SimGrid - native, the same 6 trials and faults)") != std::string::npos);
  const auto j = nlohmann::json::parse(slurp(report));
  CHECK(j["engine"] == "simgrid");
  CHECK(j["native_approximation_error"]["trials"] == 6);
  CHECK(j["native_approximation_error"]["ledger_hours_difference"].contains("checkpoint_save"));
  CHECK(run_cli("run --contention sometimes").exit_code == 2);
}

TEST_CASE("the JSON report is byte-identical whatever --jobs is", "[cli][process]") {
  const fs::path one = scratch() / "one.json", two = scratch() / "two.json";
  const std::string scenario = ctwin::test::fixture("features.json");
  REQUIRE(run_cli("run " + scenario + " --trials 30 --jobs 1 --json " + one.string()).exit_code == 0);
  REQUIRE(run_cli("run " + scenario + " --trials 30 --jobs 2 --json " + two.string()).exit_code == 0);
  CHECK(slurp(one) == slurp(two));
  const auto report = nlohmann::json::parse(slurp(one));
  CHECK(report["schema_version"] == 1);
  CHECK(report["trials"] == 30);
  CHECK(report["per_trial"].size() == 30);
  for (const char* key : {"scenario", "seed", "goodput", "ledger_hours", "interruptions_per_day"}) CHECK(report.contains(key));
  CHECK(report["scenario"].contains("content_hash"));
}

TEST_CASE("the event log and the timeline of trial 0 are written", "[cli][process]") {
  const fs::path events = scratch() / "events.csv", timeline = scratch() / "timeline.json", csv = scratch() / "t.csv";
  REQUIRE(run_cli("run " + ctwin::test::fixture("features.json") + " --trials 3 --events " + events.string() +
                " --timeline " + timeline.string() + " --csv " + csv.string())
              .exit_code == 0);
  const std::string log = slurp(events);
  CHECK(log.rfind("time_s,node,gpu,kind,code,detail\n", 0) == 0);
  CHECK(log.find(",fault,79,gpu_lost") != std::string::npos);
  const auto trace = nlohmann::json::parse(slurp(timeline));
  CHECK(trace["traceEvents"].size() > 10);
  std::istringstream rows(slurp(csv));
  std::string line;
  int lines = 0;
  while (std::getline(rows, line)) ++lines;
  CHECK(lines == 4);  // header + 3 trials
}

TEST_CASE("timeline-trial picks the median trial, whose events and node tracks are written", "[cli][process]") {
  const fs::path events = scratch() / "p50-events.csv", timeline = scratch() / "p50.json", csv = scratch() / "p50.csv";
  const std::string scenario = ctwin::test::repo_file("scenarios/default.json");
  REQUIRE(run_cli("run " + scenario + " --trials 9 --timeline-trial p50 --events " + events.string() + " --timeline " +
                  timeline.string() + " --csv " + csv.string())
              .exit_code == 0);
  // Goodput per trial from the CSV (trial,seed,wall_hours,goodput,...): the median is the 5th of 9.
  std::vector<std::pair<double, int>> by_goodput;
  std::istringstream rows(slurp(csv));
  std::string line;
  std::getline(rows, line);
  while (std::getline(rows, line)) {
    std::vector<std::string> cells;
    std::istringstream cols(line);
    for (std::string c; std::getline(cols, c, ',');) cells.push_back(c);
    by_goodput.emplace_back(std::stod(cells[3]), std::stoi(cells[0]));
  }
  REQUIRE(by_goodput.size() == 9);
  std::stable_sort(by_goodput.begin(), by_goodput.end(), [](auto& a, auto& b) { return a.first < b.first; });
  const auto [median_goodput, median_trial] = by_goodput[4];
  // The event log is that trial's: its ledger's productive share is the trial's goodput.
  double productive = 0, total = 0;
  std::istringstream log(slurp(events));
  while (std::getline(log, line)) {
    if (line.find(",ledger,,") == std::string::npos) continue;
    const double v = std::stod(line.substr(line.find('=') + 1));
    total += v;
    if (line.find("productive=") != std::string::npos) productive = v;
  }
  CHECK(productive / total == Approx(median_goodput).epsilon(1e-6));
  // The timeline names it, and every node-scoped event sits on its own node's track.
  const auto trace = nlohmann::json::parse(slurp(timeline))["traceEvents"];
  std::map<int, std::string> tracks;
  for (const auto& e : trace) {
    if (e["name"] == "process_name") CHECK(e["args"]["name"] == "ctwin trial " + std::to_string(median_trial) + ": default");
    if (e["name"] == "thread_name") CHECK(tracks.emplace(e["tid"].get<int>(), e["args"]["name"].get<std::string>()).second);
  }
  int on_nodes = 0;
  for (const auto& e : trace) {
    if (e["ph"] == "M" || !e.contains("args") || !e["args"].contains("node")) continue;
    if (e["tid"].get<int>() < 100) continue;  // the faults track keeps every fault too
    CHECK(tracks.at(e["tid"].get<int>()) == "node-" + std::to_string(e["args"]["node"].get<int>()));
    ++on_nodes;
  }
  CHECK(on_nodes > 0);
  CHECK(run_cli("run " + scenario + " --trials 9 --timeline-trial 9 --timeline " + timeline.string()).exit_code == 2);
  CHECK(run_cli("run " + scenario + " --trials 9 --timeline-trial p50x --timeline " + timeline.string()).exit_code == 2);
}

TEST_CASE("timeline draws any event log: each fault on its node's track, the checkpoints, the phases", "[cli][process]") {
  const fs::path events = scratch() / "log-events.csv", trace_path = scratch() / "log-timeline.json";
  REQUIRE(run_cli("run " + ctwin::test::fixture("features.json") + " --trials 1 --events " + events.string()).exit_code == 0);
  REQUIRE(run_cli("timeline " + events.string() + " --out " + trace_path.string()).exit_code == 0);
  int faults = 0, checkpoints = 0;
  std::istringstream rows(slurp(events));
  for (std::string line; std::getline(rows, line);) {
    faults += line.find(",fault,") != std::string::npos;
    checkpoints += line.find(",checkpoint,") != std::string::npos;
  }
  const auto trace = nlohmann::json::parse(slurp(trace_path))["traceEvents"];
  std::map<int, std::string> tracks;
  for (const auto& e : trace)
    if (e["name"] == "thread_name") tracks[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
  int on_faults_track = 0, drawn_checkpoints = 0;
  for (const auto& e : trace) {
    if (e["ph"] == "M") continue;
    const std::string& track = tracks.at(e["tid"].get<int>());
    on_faults_track += track == "faults";
    drawn_checkpoints += track == "checkpoint saves";
    if (track.rfind("node-", 0) == 0 && e["args"].contains("node")) CHECK(track == "node-" + std::to_string(e["args"]["node"].get<int>()));
  }
  CHECK(faults > 0);
  CHECK(on_faults_track == faults);
  CHECK(drawn_checkpoints == checkpoints);
  CHECK(run_cli("timeline " + ctwin::test::fixture("minimal.json") + " --out " + trace_path.string()).exit_code == 2);
}

TEST_CASE("faults prints the very strikes trial 0 of run draws, in order", "[cli][process]") {
  const std::string scenario = ctwin::test::repo_file("scenarios/twin_loop.json");
  const fs::path events = scratch() / "twin-events.csv", strikes = scratch() / "strikes.json";
  REQUIRE(run_cli("run " + scenario + " --trials 1 --seed 6 --events " + events.string()).exit_code == 0);
  REQUIRE(run_cli("faults " + scenario + " --seed 6 --json " + strikes.string()).exit_code == 0);
  // The fault rows of trial 0's log: their times and classes.
  std::vector<std::pair<std::string, std::string>> logged;
  std::istringstream rows(slurp(events));
  std::string line;
  while (std::getline(rows, line))
    if (line.find(",fault,") != std::string::npos) logged.emplace_back(line.substr(0, line.find(',')), line.substr(line.rfind(',') + 1));
  const auto drawn = nlohmann::json::parse(slurp(strikes))["strikes"];
  REQUIRE(!logged.empty());
  REQUIRE(drawn.size() >= logged.size());  // strikes past the run's end are not in its log
  for (std::size_t i = 0; i < logged.size(); ++i) {
    CHECK(std::stod(logged[i].first) == Approx(drawn[i]["time_s"].get<double>()).margin(1e-6));
    CHECK(logged[i].second == drawn[i]["class"].get<std::string>());
  }
  CHECK(run_cli("faults " + scenario + " --until soon").exit_code == 2);
}

TEST_CASE("sweep, optimize and compare write their table, JSON, CSV and plot", "[cli][experiments][process]") {
  const std::string scenario = ctwin::test::fixture("minimal.json");
  const fs::path json = scratch() / "x.json", csv = scratch() / "x.csv", svg = scratch() / "x.svg";
  const std::string outputs = " --json " + json.string() + " --csv " + csv.string() + " --svg " + svg.string();

  Outcome out = run_cli("sweep " + scenario + " --trials 20 --set /policies/checkpoint/interval=30min,1h,2h" + outputs);
  REQUIRE(out.exit_code == 0);
  CHECK(out.output.find("best: /policies/checkpoint/interval") != std::string::npos);
  CHECK(nlohmann::json::parse(slurp(json))["points"].size() == 3);
  CHECK(slurp(svg).rfind("<svg", 0) == 0);

  out = run_cli("optimize " + scenario + " --trials 20 --points 7 --from 10min --to 4h" + outputs);
  REQUIRE(out.exit_code == 0);
  const auto best = nlohmann::json::parse(slurp(json))["best"];
  CHECK(best["interval_s"].get<double>() >= 600);
  CHECK(best["interval_s"].get<double>() <= 4 * 3600);

  out = run_cli("compare " + scenario + " --trials 20 --variant 'often:/policies/checkpoint/interval=10min'" + outputs);
  REQUIRE(out.exit_code == 0);
  const auto variants = nlohmann::json::parse(slurp(json))["variants"];
  REQUIRE(variants.size() == 2);
  CHECK(variants[0]["name"] == "baseline");
  CHECK(variants[1]["vs_baseline"]["paired"].contains("ci95_low"));
}

TEST_CASE("the decision tools reject bad input with exit 2 and write nothing", "[cli][experiments][process]") {
  const std::string scenario = ctwin::test::fixture("minimal.json");
  const fs::path json = scratch() / "never.json";
  fs::remove(json);
  Outcome out = run_cli("sweep " + scenario + " --set /cluster/spare_nodes=-1 --json " + json.string());
  CHECK(out.exit_code == 2);
  CHECK(out.output.find("/cluster/spare_nodes: must be between 0") != std::string::npos);
  CHECK(run_cli("sweep " + scenario + " --set spare_nodes").exit_code == 2);
  CHECK(run_cli("compare " + scenario + " --variant nocolon").exit_code == 2);
  CHECK(run_cli("optimize " + scenario + " --from 10parsecs").exit_code == 2);
  CHECK(run_cli("optimize " + scenario + " --choose elastic").exit_code == 2);
  out = run_cli("optimize " + scenario + " --choose /policies/elastic/mode=wait,stretch --json " + json.string());
  CHECK(out.exit_code == 2);
  CHECK(out.output.find("/policies/elastic/mode: unknown value \"stretch\"") != std::string::npos);
  CHECK_FALSE(fs::exists(json));
}

TEST_CASE("writing a report to a device writes through it and leaves the device alone", "[cli][process]") {
  // Renaming a finished file over /dev/null would replace the device itself.
  struct stat before {}, after {};
  REQUIRE(::stat("/dev/null", &before) == 0);
  REQUIRE(S_ISCHR(before.st_mode));
  CHECK(run_cli("run " + ctwin::test::fixture("minimal.json") + " --trials 2 --json /dev/null --csv /dev/null").exit_code == 0);
  REQUIRE(::stat("/dev/null", &after) == 0);
  CHECK(S_ISCHR(after.st_mode));
  CHECK(after.st_rdev == before.st_rdev);
}

TEST_CASE("an output given as '-' goes to stdout and the summary to stderr, and only one may", "[cli][process]") {
  const fs::path out_file = scratch() / "stdout.json";
  const std::string command = std::string(CTWIN_BINARY) + " run " + ctwin::test::fixture("minimal.json") +
                              " --trials 3 --json - > " + out_file.string() + " 2>/dev/null";
  const int status = std::system(command.c_str());
  CHECK(WEXITSTATUS(status) == 0);
  const std::string out = slurp(out_file);
  const auto report = nlohmann::json::parse(out);  // nothing but the report
  CHECK(report.at("trials") == 3);
  CHECK_FALSE(fs::exists("-"));
  const auto both = run_cli("run " + ctwin::test::fixture("minimal.json") + " --trials 3 --json - --csv -");
  CHECK(both.exit_code == 2);
  CHECK(both.output.find("only one output may go to stdout") != std::string::npos);
}

TEST_CASE("step --sensitivity runs on every shipped workload and says which field moves it most", "[cli][step][process]") {
  for (const char* name : {"megascale_175b", "moe_8x22b_ep", "llama3_405b_16k_full"}) {
    INFO(name);
    const fs::path json = scratch() / (std::string(name) + "-sensitivity.json");
    const Outcome out = run_cli("step " + ctwin::test::repo_file(std::string("scenarios/") + name + ".json") + " --sensitivity --json " + json.string());
    REQUIRE(out.exit_code == 0);
    CHECK(out.output.find("assumed (not in the scenario)") != std::string::npos);
    CHECK(out.output.find("sensitivity: each field over its plausible values") != std::string::npos);
    const nlohmann::json report = nlohmann::json::parse(slurp(json));
    CHECK_FALSE(report.at("assumed").empty());
    const auto& s = report.at("sensitivity");
    CHECK(s.at("min_s").get<double>() <= report.at("step_s").get<double>());
    CHECK(s.at("max_s").get<double>() >= report.at("step_s").get<double>());
    CHECK(s.at("fields").size() >= 3);
  }
  // A shrunk or degraded state is not what the sensitivity answers: exit 2, nothing written.
  const fs::path json = scratch() / "refused.json";
  const Outcome refused = run_cli("step " + ctwin::test::repo_file("scenarios/megascale_175b.json") + " --sensitivity --dp-width 2 --json " + json.string());
  CHECK(refused.exit_code == 2);
  CHECK(refused.output.find("--sensitivity is for the healthy fabric") != std::string::npos);
  CHECK_FALSE(fs::exists(json));
}

TEST_CASE("step on Llama 3's 16k layout names its assumed schedule, and its range spans the schedules that fit", "[cli][step][process]") {
  const fs::path json = scratch() / "llama3-16k-step.json";
  const Outcome out = run_cli("step " + ctwin::test::repo_file("scenarios/llama3_405b_16k_full.json") + " --sensitivity --json " + json.string());
  REQUIRE(out.exit_code == 0);
  CHECK(out.output.find("/workload/parallel/schedule              1f1b") != std::string::npos);
  CHECK(out.output.find("range            ") != std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(slurp(json));
  const double lo = report.at("range").at("min_s"), hi = report.at("range").at("max_s");
  CHECK(lo < report.at("step_s").get<double>());
  CHECK(hi > report.at("step_s").get<double>());
  int schedules = 0;
  for (const auto& f : report.at("sensitivity").at("fields")) {
    if (f.at("field") != "schedule" && f.at("field") != "virtual_stages") continue;
    for (const auto& v : f.at("values")) {
      if (!v.contains("step_s")) continue;
      ++schedules;
      CHECK(v.at("step_s").get<double>() >= lo);
      CHECK(v.at("step_s").get<double>() <= hi);
    }
  }
  CHECK(schedules >= 8);  // 1F1B, ZB-H1, ZB-V, interleaving by 2..7
  // The efficiencies and the recomputation are varied too.
  std::set<std::string> fields;
  for (const auto& f : report.at("sensitivity").at("fields")) fields.insert(f.at("field").get<std::string>());
  for (const char* name : {"gemm", "attention", "recompute", "schedule", "activation_offload"}) CHECK(fields.count(name) == 1);
}

TEST_CASE("a layout that does not fit is refused with the cheapest change that does", "[cli][step][process]") {
  auto doc = nlohmann::json::parse(slurp(ctwin::test::repo_file("scenarios/llama3_405b_16k_full.json")));
  doc["workload"]["parallel"]["schedule"] = "dualpipe";
  const fs::path scenario = scratch() / "dualpipe-16k.json";
  std::ofstream(scenario) << doc.dump();
  const Outcome out = run_cli("step " + scenario.string());
  CHECK(out.exit_code == 2);
  CHECK(out.output.find("/workload/parallel: does not fit in GPU memory") != std::string::npos);
  CHECK(out.output.find("the cheapest change that fits: schedule zb_v") != std::string::npos);
}

TEST_CASE("run --step-uncertainty on draws a modelled step from its range and holds a stated one", "[cli][process]") {
  const fs::path json = scratch() / "step-drawn.json";
  const Outcome out = run_cli("run " + ctwin::test::repo_file("scenarios/megascale_175b.json") + " --trials 20 --step-uncertainty on --json " + json.string());
  REQUIRE(out.exit_code == 0);
  CHECK(out.output.find("each trial draws it from") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(json));
  const auto& drawn = report.at("step").at("drawn");
  CHECK(drawn.at("min_seconds").get<double>() < report.at("step").at("seconds").get<double>());
  CHECK(drawn.at("max_seconds").get<double>() > report.at("step").at("seconds").get<double>());
  const Outcome stated = run_cli("run " + ctwin::test::repo_file("scenarios/llama3_405b_16k_full.json") + " --trials 2 --step-uncertainty on");
  CHECK(stated.exit_code == 0);
  CHECK(stated.output.find("the step time is stated (job.step_time): it is held") != std::string::npos);
}

TEST_CASE("run says what its tail is made of, and --sensitivity which assumed field moves goodput most", "[cli][process]") {
  const fs::path one = scratch() / "explained-1.json", two = scratch() / "explained-2.json";
  const std::string scenario = ctwin::test::fixture("minimal.json");
  const Outcome out = run_cli("run " + scenario + " --trials 40 --jobs 1 --sensitivity --json " + one.string());
  REQUIRE(out.exit_code == 0);
  CHECK(out.output.find("where the time went, share of wall") != std::string::npos);
  CHECK(out.output.find("the runs at or below p5") != std::string::npos);
  CHECK(out.output.find("moves it most") != std::string::npos);
  CHECK(out.output.find("fleet spread       skipped: no class states a fleet_sigma") != std::string::npos);
  REQUIRE(run_cli("run " + scenario + " --trials 40 --jobs 2 --sensitivity --json " + two.string()).exit_code == 0);
  CHECK(slurp(one) == slurp(two));  // the tail and the variants are taken in trial order
  const auto report = nlohmann::json::parse(slurp(one));
  const auto& tail = report.at("tail");
  CHECK(tail.at("at_or_below_p5").at("trials").get<int>() >= 2);
  CHECK(tail.at("p5").get<double>() == report.at("goodput").at("p5").get<double>());
  double shares = 0;
  for (const auto& [category, share] : tail.at("median_run").at("ledger_share").items()) shares += share.get<double>();
  CHECK(shares == Approx(1.0));
  const auto& s = report.at("sensitivity");
  CHECK(s.at("fields").size() == 6);
  CHECK(s.at("most").is_string());
  CHECK(s.at("min").get<double>() <= report.at("goodput").at("mean").get<double>());
}

TEST_CASE("a dry spare pool's policy is priced by its pointers: sweep and compare on a small scenario", "[cli][experiments][process]") {
  nlohmann::json doc = ctwin::test::read_json(ctwin::test::fixture("minimal.json"));
  doc["cluster"]["spare_nodes"] = 0;  // every replaced node waits for its 2-day repair
  const fs::path scenario = scratch() / "dry-pool.json", sweep = scratch() / "dry-sweep.json", compare = scratch() / "dry-compare.json";
  std::ofstream(scenario) << doc.dump();
  REQUIRE(run_cli("sweep " + scenario.string() + " --trials 30 --set /policies/spare_pool/top_up/nodes=0,2 --json " + sweep.string())
              .exit_code == 0);
  const auto points = nlohmann::json::parse(slurp(sweep)).at("points");
  CHECK(points[1]["goodput"]["mean"].get<double>() > points[0]["goodput"]["mean"].get<double>());
  REQUIRE(run_cli("compare " + scenario.string() + " --trials 30 --variant 'expedite:/policies/spare_pool/expedited_repair=12h' --json " +
                  compare.string())
              .exit_code == 0);
  CHECK(nlohmann::json::parse(slurp(compare)).at("variants")[1]["vs_baseline"]["paired"]["ci95_low"].get<double>() > 0);
  const Outcome bad = run_cli("sweep " + scenario.string() + " --trials 4 --set /policies/spare_pool/top_up/nodes=-1");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("/policies/spare_pool/top_up/nodes") != std::string::npos);
}
