// Calibration: each reader on fixtures in the real formats, the estimators against known answers,
// and the round trip: the simulator writes an event log from known parameters (a Weibull shape
// of 0.7 among them) and `ctwin calibrate` recovers them within their intervals.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <boost/math/special_functions/gamma.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <boost/random/weibull_distribution.hpp>

#include "calibration/calibrate.hpp"
#include "calibration/estimators.hpp"
#include "core/event_log.hpp"
#include "calibration/readers/incident_table.hpp"
#include "calibration/readers/slurm_sacct.hpp"
#include "calibration/readers/step_log.hpp"
#include "calibration/readers/xid_log.hpp"
#include "calibration/step_times.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using namespace ctwin::calib;

namespace {

std::string trace(const std::string& name) { return std::string(CTWIN_TEST_DIR) + "/traces/" + name; }

template <class Reader>
auto read(const std::string& name, Reader reader) {
  std::ifstream in(trace(name));
  REQUIRE(in);
  return reader(in, name);
}

}  // namespace

TEST_CASE("kernel logs: Xid lines from dmesg, syslog and ISO journals, bad ones reported by line", "[calibration][readers]") {
  const XidLog dmesg = read("gpu-017.dmesg", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, "gpu-017"); });
  REQUIRE(dmesg.events.size() == 4);
  CHECK(dmesg.events[0].xid == 48);
  CHECK(dmesg.events[0].host == "gpu-017");
  CHECK(dmesg.events[0].pci == "0000:3b:00");
  CHECK(dmesg.events[0].time_s == Approx(8123.456789));
  CHECK(dmesg.events[3].xid == 79);
  CHECK(dmesg.events[3].pci == "0000:86:00");  // the old form, without "PCI:"
  CHECK(dmesg.events[3].message.find("fallen off the bus") != std::string::npos);
  REQUIRE(dmesg.report.malformed.size() == 1);
  CHECK(dmesg.report.malformed[0].line == 8);
  CHECK(dmesg.report.skipped == 4);
  CHECK(dmesg.window.at("gpu-017").second == Approx(172800));

  const XidLog journal = read("fleet.journal", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, "", 2023); });
  REQUIRE(journal.events.size() == 3);
  CHECK(journal.events[0].host == "gpu-001");
  CHECK(journal.events[1].xid == 79);
  // Dec 30 23:59:58 2023, then Jan 1 03:12:45 2024: the year turned.
  CHECK(journal.events[1].time_s - journal.events[0].time_s == Approx(86400 + 3 * 3600 + 12 * 60 + 47));
  CHECK(journal.events[2].host == "gpu-002");
  REQUIRE(journal.report.malformed.size() == 1);
  CHECK(journal.report.malformed[0].line == 5);

  const XidLog iso = read("fleet-iso.journal", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, ""); });
  REQUIRE(iso.events.size() == 2);
  CHECK(iso.events[0].time_s == Approx(epoch_seconds(2024, 3, 21, 12, 34, 34)));  // +0100
  CHECK(iso.events[1].host == "gpu-102");
  CHECK(iso.events[1].xid == 94);

  // journalctl -k -o json: the stamp and host are fields; MESSAGE may come as its bytes.
  const XidLog json = read("fleet-json.journal", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, ""); });
  REQUIRE(json.events.size() == 2);
  CHECK(json.events[0].host == "gpu-101");
  CHECK(json.events[0].xid == 79);
  CHECK(json.events[0].pci == "0000:3b:00");
  CHECK(json.events[0].time_s == Approx(epoch_seconds(2024, 3, 21, 12, 34, 34) + 0.123456));
  CHECK(json.events[1].host == "gpu-102");
  CHECK(json.events[1].xid == 48);  // from MESSAGE's bytes
  REQUIRE(json.report.malformed.size() == 3);
  CHECK(json.report.malformed[0].line == 5);  // "Xid (...): fatal": no code
  CHECK(json.report.malformed[1].line == 6);
  CHECK(json.report.malformed[1].reason.find("not one") != std::string::npos);
  CHECK(json.report.malformed[2].reason == "a journal entry without MESSAGE");
  CHECK(json.report.skipped == 3);  // two other kernel messages, and a user's `logger` line claiming an Xid
  CHECK(json.window.at("gpu-102").second - json.window.at("gpu-102").first == Approx(86400 - 7200));

  const XidLog forms = read("public-forms.syslog", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, "", 2018); });
  REQUIRE(forms.events.size() == 3);
  CHECK(forms.events[0].host == "localhost");
  CHECK(forms.events[0].xid == 31);
  CHECK(forms.events[1].pci == "0000:01:00");
  CHECK(forms.events[1].xid == 13);
}

TEST_CASE("sacct --parsable2: allocations only, states, node lists, bad lines reported", "[calibration][readers]") {
  const SlurmLog log = read("jobs.sacct", read_sacct);
  REQUIRE(log.jobs.size() == 5);
  CHECK(log.report.skipped == 3);  // two steps, one running job
  REQUIRE(log.report.malformed.size() == 1);
  CHECK(log.report.malformed[0].line == 10);
  CHECK(log.jobs[0].state == "NODE_FAIL");
  CHECK(log.jobs[0].failed());
  CHECK(log.jobs[0].nodes == 64);
  CHECK(log.jobs[0].node_list.size() == 64);
  CHECK(log.jobs[0].node_list.front() == "gpu-001");
  CHECK(log.jobs[1].node_list.size() == 64);  // 001-040 and 042-065
  CHECK(log.jobs[1].node_list[40] == "gpu-042");
  CHECK(log.jobs[4].state == "CANCELLED");
  CHECK_FALSE(log.jobs[4].failed());
  CHECK(log.jobs[0].end_s - log.jobs[0].start_s == Approx(16 * 3600 + 13 * 60 + 41));
  CHECK(expand_hostlist("a[1-3],b,c[08-10]") == std::vector<std::string>{"a1", "a2", "a3", "b", "c08", "c09", "c10"});
  CHECK(expand_hostlist("a[3-1]").empty());
}

TEST_CASE("incident tables and event logs: rows with exposure, malformed lines by number", "[calibration][readers]") {
  const IncidentTable table = read("incidents.csv", read_incident_table);
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0].exposure_hours == Approx(150000 * 24));
  CHECK(table.rows[0].component == "gpu");
  CHECK(table.rows[1].effect == "hang");
  REQUIRE(table.report.malformed.size() == 1);
  CHECK(table.report.malformed[0].line == 5);
  CHECK(table.report.malformed[0].reason.find("node-fortnights") != std::string::npos);

  std::istringstream log("time_s,node,gpu,kind,code,detail\n0.000000,,,running,,\n12.5,node-3,2,fault,79,gpu_faulty\n"
                         "13,node-x,,node_down,,\n14,node-3,,to_repair,,\n");
  const EventLog events = read_event_log(log, "inline.csv");
  REQUIRE(events.events.size() == 3);
  CHECK(events.events[1].node == 3);
  CHECK(events.events[1].gpu == 2);
  CHECK(events.events[1].code == 79);
  REQUIRE(events.report.malformed.size() == 1);
  CHECK(events.report.malformed[0].line == 4);

  std::istringstream garbage("this is not\na trace of any kind\n");
  const EventLog none = read_event_log(garbage, "garbage.csv");
  CHECK_THROWS_AS(none.report.require_some(), TraceUnreadable);
}

TEST_CASE("estimators: exact Poisson intervals, censored Weibull MLE and its test of shape 1, lognormal", "[calibration]") {
  const Interval zero = poisson_rate(0, 1);
  CHECK(zero.upper == Approx(3.6889).epsilon(1e-4));  // -ln(0.025)
  const Interval ten = poisson_rate(10, 2);
  CHECK(ten.estimate == 5);
  CHECK(ten.lower == Approx(4.7954 / 2).epsilon(1e-4));
  CHECK(ten.upper == Approx(18.3904 / 2).epsilon(1e-4));

  boost::random::mt19937_64 rng(42);
  std::vector<Life> weibull, exponential;
  boost::random::weibull_distribution<double> wear(1.5, 100.0), memoryless(1.0, 100.0);
  for (int i = 0; i < 3000; ++i) {
    const double a = wear(rng), b = memoryless(rng);
    weibull.push_back({std::min(a, 150.0), a < 150});  // censored at 150 h
    exponential.push_back({std::min(b, 150.0), b < 150});
  }
  const WeibullFit w = fit_weibull(weibull);
  CHECK(w.shape.lower < 1.5);
  CHECK(w.shape.upper > 1.5);
  CHECK(w.scale.lower < 100);
  CHECK(w.scale.upper > 100);
  CHECK(w.censored > 0);
  CHECK(w.shape_one_p_value < 1e-6);
  CHECK(w.mean_life.lower < 100 * std::tgamma(1 + 1 / 1.5));
  CHECK(w.mean_life.upper > 100 * std::tgamma(1 + 1 / 1.5));
  const WeibullFit e = fit_weibull(exponential);
  CHECK(e.shape.lower < 1);
  CHECK(e.shape.upper > 1);
  CHECK(e.shape_one_p_value > 0.01);
  CHECK(e.exponential_scale == Approx(100).epsilon(0.06));

  const LognormalFit l = fit_lognormal({1, 2, 4, 8, 16});
  CHECK(l.median == Approx(4));
  CHECK(l.mu.estimate == Approx(std::log(4.0)));
  CHECK(l.sigma.estimate == Approx(std::log(2.0) * std::sqrt(2.5)));
  CHECK(l.mu.lower < l.mu.estimate);
}

TEST_CASE("empirical CDF: Kaplan-Meier with censored lives, thinned by rank", "[calibration]") {
  // Lives 1, 2+, 3, 4+, 5: S(1) = 4/5, S(3) = 4/5 * 2/3, S(5) = 0.
  const auto km = empirical_cdf({{3, true}, {2, false}, {1, true}, {5, true}, {4, false}});
  REQUIRE(km.size() == 3);
  CHECK(km[0].time == 1);
  CHECK(km[0].cdf == Approx(0.2));
  CHECK(km[1].cdf == Approx(1 - 0.8 * 2 / 3.0));
  CHECK(km[2].cdf == Approx(1.0));
  std::vector<Life> many;
  for (int i = 1; i <= 1000; ++i) many.push_back({static_cast<double>(i), true});
  const auto thinned = empirical_cdf(many, 11);
  REQUIRE(thinned.size() == 11);
  CHECK(thinned.front().time == 1);
  CHECK(thinned.back().cdf == Approx(1.0));
  CHECK(thinned[5].cdf == Approx(0.5).margin(0.001));
}

TEST_CASE("job MTTF against size: Poisson regression finds the exponent, lemons stand out", "[calibration]") {
  boost::random::mt19937_64 rng(7);
  auto jobs_with = [&](double exponent) {
    std::vector<JobExposure> jobs;
    for (double nodes : {8.0, 32.0, 128.0, 512.0})
      for (int i = 0; i < 60; ++i) {
        const double hours = 48;
        const double mean = 2e-4 * std::pow(nodes, exponent) * hours;
        jobs.push_back({nodes, hours, boost::random::poisson_distribution<int>(mean)(rng)});
      }
    return jobs;
  };
  const MttfScaling linear = fit_mttf_scaling(jobs_with(1.0));
  CHECK(linear.exponent.lower < 1);
  CHECK(linear.exponent.upper > 1);
  CHECK(linear.per_node_rate.lower < 2e-4);
  CHECK(linear.per_node_rate.upper > 2e-4);
  const MttfScaling steeper = fit_mttf_scaling(jobs_with(1.3));
  CHECK(steeper.exponent.estimate == Approx(1.3).epsilon(0.05));
  CHECK(steeper.exponent_one_p_value < 1e-3);

  std::vector<NodeCount> nodes;
  for (int n = 0; n < 200; ++n) nodes.push_back({"node-" + std::to_string(n), boost::random::poisson_distribution<int>(2.0)(rng), 1000});
  nodes[17].count = 15;
  const std::vector<Lemon> lemons = find_lemons(nodes);
  REQUIRE(lemons.size() == 1);
  CHECK(lemons[0].node == "node-17");
}

TEST_CASE("round trip: an event log simulated from known rates and a Weibull shape of 0.7 calibrates back within its "
          "intervals",
          "[calibration][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ctwin-calibration-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nlohmann::json truth = test::read_json(test::fixture("minimal.json"));
  truth["name"] = "roundtrip";
  truth["cluster"]["nodes"] = 128;
  truth["cluster"]["spare_nodes"] = 0;
  truth["job"] = {{"nodes", 128}, {"step_time", "10s"}, {"horizon", "365d"}};
  truth["faults"] = nlohmann::json::array(
      {{{"name", "gpu_xid79"}, {"rate", "2/gpu-year"}, {"distribution", "weibull"}, {"weibull_shape", 0.7}, {"effect", "crash"},
        {"xid", 79}, {"detection", "10s"}, {"recovery", {{"action", "reboot"}, {"duration", "10min"}}}},
       {{"name", "node_crash"}, {"rate", "3/node-year"}, {"effect", "crash"}, {"detection", "30s"},
        {"recovery", {{"action", "reboot"}, {"duration", "5min"}}}}});
  const std::string scenario = (dir / "truth.json").string(), events = (dir / "events.csv").string();
  const std::string calibrated = (dir / "calibrated.json").string(), report = (dir / "report.json").string();
  std::ofstream(scenario) << truth.dump(2);
  REQUIRE(test::run_ctwin("run " + scenario + " --trials 1 --seed 4 --events " + events).first == 0);
  const auto [code, out] = test::run_ctwin("calibrate " + events + " --base " + scenario + " --out " + calibrated + " --report " + report +
                                           " --plots " + dir.string());
  INFO(out);
  REQUIRE(code == 0);
  const nlohmann::json r = test::read_json(report);
  std::map<std::string, nlohmann::json> classes;
  for (const auto& c : r["classes"]) classes[c["class"]] = c;
  const auto& gpu = classes.at("gpu_xid79");
  CHECK(gpu["count"].get<double>() > 1000);
  CHECK(gpu["weibull"]["shape"]["lower"].get<double>() < 0.7);
  CHECK(gpu["weibull"]["shape"]["upper"].get<double>() > 0.7);
  CHECK(gpu["weibull"]["shape_one_p_value"].get<double>() < 1e-6);
  // The fitted Weibull follows the Kaplan-Meier CDF (within a Kolmogorov distance of 0.03); the
  // exponential, with shape 1 rejected, does not.
  double weibull_gap = 0, exponential_gap = 0;
  const auto& cdf = gpu["lifetime_cdf"];
  for (std::size_t i = 0; i < cdf["hours"].size(); ++i) {
    weibull_gap = std::max(weibull_gap, std::abs(cdf["empirical"][i].get<double>() - cdf["weibull"][i].get<double>()));
    exponential_gap = std::max(exponential_gap, std::abs(cdf["empirical"][i].get<double>() - cdf["exponential"][i].get<double>()));
  }
  CHECK(weibull_gap < 0.03);
  CHECK(exponential_gap > 2 * weibull_gap);
  for (const char* plot : {"rates_gpu.svg", "rates_node.svg", "lifetimes_gpu_xid79.svg", "lifetimes_node_crash.svg", "recovery_hours.svg"})
    CHECK(fs::file_size(dir / plot) > 1000);
  CHECK(gpu["rate_per_gpu_year"]["lower"].get<double>() < 2.0);
  CHECK(gpu["rate_per_gpu_year"]["upper"].get<double>() > 2.0);
  const auto& node = classes.at("node_crash");
  CHECK(node["rate_per_node_year"]["lower"].get<double>() < 3.0);
  CHECK(node["rate_per_node_year"]["upper"].get<double>() > 3.0);
  CHECK(node["weibull"]["shape_one_p_value"].get<double>() > 0.01);
  // The calibrated scenario loads, with the shape and the provenance written in.
  const Scenario s = load_scenario(calibrated);
  REQUIRE(s.faults.size() == 2);
  CHECK(s.faults[0].distribution == Distribution::Weibull);
  CHECK(s.faults[0].weibull_shape == Approx(0.7).epsilon(0.06));
  CHECK(s.faults[1].distribution == Distribution::Exponential);
  CHECK(test::read_json(calibrated)["faults"][0]["calibration"]["provenance"][0].get<std::string>().find("events.csv") !=
        std::string::npos);
  // How sure each rate is goes in too: the evidence for the count-over-exposure class, the mean
  // life's spread for the Weibull one; and how long the traces lasted.
  REQUIRE(s.faults[1].uncertainty);
  CHECK(s.faults[1].uncertainty->events == Approx(classes.at("node_crash")["count"].get<double>()));
  REQUIRE(s.faults[0].uncertainty);
  CHECK(s.faults[0].uncertainty->sigma);
  REQUIRE(s.calibrated_window_us);
  CHECK(*s.calibrated_window_us == Approx(365.0 * 86400e6).epsilon(1e-3));
  // A forecast past that window says so; one within it does not.
  nlohmann::json longer = test::read_json(calibrated);
  longer["job"]["horizon"] = "730d";
  const std::string longer_path = (dir / "longer.json").string();
  std::ofstream(longer_path) << longer.dump(2);
  const auto [longer_code, longer_out] = test::run_ctwin("run " + longer_path + " --trials 2");
  CHECK(longer_code == 0);
  CHECK(longer_out.find("past the 365.00 d of traces its rates were calibrated on") != std::string::npos);
  CHECK(test::run_ctwin("run " + calibrated + " --trials 2").second.find("past the") == std::string::npos);
  // A trace where nothing parses is bad input: exit 2, and nothing written.
  std::ofstream(dir / "junk.csv") << "time_s,node,gpu,kind,code,detail\nnot,a,valid,row\n";
  const std::string junk_out = (dir / "junk-out.json").string();
  const auto [bad, why] = test::run_ctwin("calibrate " + (dir / "junk.csv").string() + " --base " + scenario + " --out " + junk_out);
  CHECK(bad == 2);
  CHECK(why.find("line 2") != std::string::npos);
  CHECK_FALSE(fs::exists(junk_out));
  fs::remove_all(dir);
}

TEST_CASE("calibrate from fleet records without a base: Xid classes, sacct jobs and incident rows", "[calibration]") {
  CalibrateOptions options;
  options.year = 2023;
  const CalibrationResult r =
      calibrate({trace("gpu-017.dmesg"), trace("fleet.journal"), trace("jobs.sacct"), trace("incidents.csv")}, options);
  std::map<std::string, nlohmann::ordered_json> classes;
  for (const auto& c : r.report["classes"]) classes[c["class"]] = c;
  // An Xid the catalogue knows is its class (the Xid table names it).
  CHECK(classes.at("xid48_hbm_dbe")["count"] == 1);  // the repeat 0.1 ms later is the same fault
  CHECK(classes.at("xid79_fallen_off_bus")["count"] == 2);  // gpu-017 and gpu-001
  CHECK(classes.at("gpu_dbe")["count"] == 12);
  CHECK(classes.at("slurm_node_fail")["count"] == 1);
  // The second 48 and the 63 that follows it half a second later are that fault, not two more.
  CHECK(r.report["traces"][0]["repeats_merged"] == 2);
  CHECK_FALSE(classes.count("xid_63"));
  CHECK(r.report["traces"][0]["malformed"] == 1);
  CHECK(r.report["job_mttf_vs_size"]["jobs"] == 5);
  // Xid classes and incident rows with an effect become fault classes; the scenario loads.
  const Scenario calibrated = parse_scenario(r.scenario.dump(), "calibrated");
  std::set<std::string> names;
  for (const auto& f : calibrated.faults) names.insert(f.name);
  CHECK(names.count("xid79_fallen_off_bus"));
  CHECK(names.count("node_hang"));
  CHECK_FALSE(names.count("slurm_node_fail"));  // no effect to simulate: report only
}

TEST_CASE("Xids are read with NVIDIA's table: an accompanying Xid is the same fault, a known one keeps its action", "[calibration]") {
  namespace fs = std::filesystem;
  const fs::path log = fs::temp_directory_path() / ("ctwin-xids-" + std::to_string(::getpid()) + ".dmesg");
  std::ofstream(log) << "[ 100.0] NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE\n"
                     << "[ 101.0] NVRM: Xid (PCI:0000:3b:00): 63, pid=1, row remap pending\n"  // part of the 48
                     << "[ 900.0] NVRM: Xid (PCI:0000:18:00): 63, pid=1, a remap on its own\n"
                     << "[ 5000.0] NVRM: Xid (PCI:0000:18:00): 95, pid=1, uncontained\n"
                     << "[ 9000.0] NVRM: Xid (PCI:0000:18:00): 92, pid=1, SBE storm\n"
                     << "[ 9500.0] NVRM: Xid (PCI:0000:18:00): 13, pid=1, graphics exception\n";
  const CalibrationResult r = calibrate({log.string()}, {});
  fs::remove(log);
  std::map<std::string, nlohmann::ordered_json> classes;
  for (const auto& c : r.report["classes"]) classes[c["class"]] = c;
  CHECK(classes.at("xid48_hbm_dbe")["count"] == 1);
  CHECK(classes.at("xid_63")["count"] == 1);  // only the remap that followed no double-bit error
  CHECK(r.report["traces"][0]["repeats_merged"] == 1);
  const Scenario calibrated = parse_scenario(r.scenario.dump(), "calibrated");
  std::map<std::string, const FaultClass*> by_name;
  for (const auto& f : calibrated.faults) by_name[f.name] = &f;
  CHECK(by_name.at("xid95_uncontained_ecc")->action == Act::ResetGpu);  // the catalogue's, not a reboot
  CHECK(by_name.at("xid92_sbe_storm")->effect == Effect::None);         // counted only
  CHECK(by_name.at("xid_63")->effect == Effect::None);                  // NVIDIA: ignore
  CHECK(by_name.at("xid_13")->action == Act::Restart);                  // NVIDIA: restart the application
}

TEST_CASE("the remap-to-RMA chain: the share of row remaps that failed goes into the double-bit class", "[calibration]") {
  // Ten double-bit errors, each remapped (Xid 63) but two, whose remaps failed (Xid 64): 2 of 10.
  namespace fs = std::filesystem;
  const fs::path log = fs::temp_directory_path() / ("ctwin-remaps-" + std::to_string(::getpid()) + ".dmesg");
  {
    std::ofstream out(log);
    for (int i = 0; i < 10; ++i) {
      const int t = 1000 + 5000 * i;
      out << "[ " << t << ".0] NVRM: Xid (PCI:0000:" << 10 + i << ":00): 48, pid=1, DBE\n";
      out << "[ " << t + 1 << ".0] NVRM: Xid (PCI:0000:" << 10 + i << ":00): " << (i < 2 ? 64 : 63) << ", pid=1, remap\n";
    }
  }
  const CalibrationResult r = calibrate({log.string()}, {});
  fs::remove(log);
  CHECK(r.report["row_remaps"]["remapped"] == 8);
  CHECK(r.report["row_remaps"]["failed"] == 2);
  CHECK(r.report["row_remaps"]["failure_probability"]["estimate"] == Approx(0.2));
  CHECK(r.report["row_remaps"]["failure_probability"]["upper"] > 0.5);  // ten remaps say little
  const Scenario calibrated = parse_scenario(r.scenario.dump(), "calibrated");
  const FaultClass* dbe = nullptr;
  for (const auto& f : calibrated.faults)
    if (f.xid == 48) dbe = &f;
  REQUIRE(dbe);
  REQUIRE(dbe->remap);
  CHECK(dbe->remap->failure_probability == Approx(0.2));
  CHECK(dbe->remap->spare_rows == 8);
}

TEST_CASE("public records: the committed incident tables are the script's, and BLOOM and ByteRobust calibrate", "[calibration][cli]") {
  namespace fs = std::filesystem;
  // The tables are generated: a hand edit, or a script change without rerunning it, fails here.
  const std::string check = "python3 " + test::repo_file("scripts/convert_public_traces.py") + " --check";
  REQUIRE(std::system(check.c_str()) == 0);
  const fs::path dir = fs::temp_directory_path() / ("ctwin-public-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string report = (dir / "bloom.json").string();
  const auto [code, out] = test::run_ctwin("calibrate " + test::repo_file("calibration/data/bloom176b_incidents.csv") + " --out " +
                                           (dir / "s.json").string() + " --report " + report);
  INFO(out);
  REQUIRE(code == 0);
  const nlohmann::json r = test::read_json(report);
  CHECK(r["traces"][0]["malformed"] == 0);
  std::map<std::string, nlohmann::json> classes;
  for (const auto& c : r["classes"]) classes[c["class"]] = c;
  // One dated GPU crash in March, then "every week or so" over 13.43 weeks: 14.43 over 114 days of 384 GPUs.
  const auto& gpu = classes.at("gpu_failure");
  CHECK(gpu["count"].get<double>() == Approx(14.43));
  CHECK(gpu["exposure_gpu_hours"].get<double>() == Approx(384 * 114.18 * 24).epsilon(1e-3));
  const double weekly = 365.25 / 7 / 384;  // one GPU a week among 384, per GPU-year
  CHECK(gpu["rate_per_gpu_year"]["lower"].get<double>() < weekly);
  CHECK(gpu["rate_per_gpu_year"]["upper"].get<double>() > weekly);
  CHECK(classes.at("software_hang")["count"] == 3);
  // The calibrated scenario runs: the placeholders it adds for hangs and slow GPUs load.
  const Scenario s = load_scenario((dir / "s.json").string());
  CHECK(s.faults.size() == 4);

  // With the BLOOM scenario as the base, the fitted classes replace the base's rates, including a
  // class the base takes from the catalogue ({"use": "gpu_slow"}): one class each, never two.
  const auto [base_code, base_out] = test::run_ctwin("calibrate " + test::repo_file("calibration/data/bloom176b_incidents.csv") +
                                                     " --base " + test::repo_file("scenarios/bloom176b.json") + " --out " +
                                                     (dir / "based.json").string());
  INFO(base_out);
  REQUIRE(base_code == 0);
  const Scenario based = load_scenario((dir / "based.json").string());
  const Scenario bloom = load_scenario(test::repo_file("scenarios/bloom176b.json"));
  std::map<std::string, int> names;
  for (const auto& f : based.faults) ++names[f.name];
  for (const auto& f : bloom.faults) CHECK(names[f.name] == 1);
  const auto slow = std::find_if(based.faults.begin(), based.faults.end(), [](const FaultClass& f) { return f.name == "gpu_slow"; });
  REQUIRE(slow != based.faults.end());
  CHECK(slow->rate.per_component_second * 3.15576e7 == Approx(classes.at("gpu_slow")["rate_per_gpu_year"]["estimate"].get<double>()).epsilon(1e-3));

  const auto [br_code, br_out] = test::run_ctwin("calibrate " + test::repo_file("calibration/data/byterobust_incident_table.csv") +
                                                 " --out " + (dir / "br.json").string() + " --report " + report);
  INFO(br_out);
  REQUIRE(br_code == 0);
  const nlohmann::json br = test::read_json(report);
  CHECK(br["classes"].size() == 16);  // 17 symptoms less the manual restarts
  for (const auto& c : br["classes"])
    if (c["class"] == "cuda_error") {
      CHECK(c["count"] == 19968);
      const auto& rate = c["rate_per_gpu_year"];
      CHECK(rate["estimate"].get<double>() == Approx(19968 / (200000 * 91.3125) * 365.25).epsilon(1e-4));
      CHECK((rate["upper"].get<double>() - rate["lower"].get<double>()) / rate["estimate"].get<double>() < 0.03);
    }
  fs::remove_all(dir);
}

TEST_CASE("step logs: Megatron-LM iteration lines and per-node timings, slow nodes by the straggler policy's robust z", "[calibration][readers]") {
  const StepLog megatron = read("megatron_train.log", read_megatron_log);
  REQUIRE(megatron.records.size() == 5);
  CHECK(megatron.records[0].step == 10);
  CHECK(megatron.records[0].duration_s == Approx(11.4026));
  CHECK(megatron.records[2].duration_s == Approx(11.1984));  // "current/mean": the current one
  CHECK(megatron.report.skipped == 5);
  REQUIRE(megatron.report.malformed.size() == 1);
  CHECK(megatron.report.malformed[0].line == 8);  // "elapsed time per iteration (ms): nan"

  // 64 nodes, 300 steps each, 1% lognormal noise; nodes 7, 21 and 50 run at 90% speed.
  boost::random::mt19937 rng(17);
  boost::random::lognormal_distribution<double> noise(0.0, 0.01);
  std::ostringstream csv;
  csv << "step,node,duration_s\n";
  for (int step = 0; step < 300; ++step)
    for (int node = 0; node < 64; ++node)
      csv << step << ",node-" << node << "," << 10.0 * noise(rng) / (node == 7 || node == 21 || node == 50 ? 0.9 : 1.0) << "\n";
  csv << "300,node-3,-1\n";
  std::istringstream in(csv.str());
  const StepLog log = read_step_csv(in, "steps.csv");
  CHECK(log.records.size() == 300 * 64);
  REQUIRE(log.report.malformed.size() == 1);
  CHECK(log.report.malformed[0].line == 300 * 64 + 2);
  const StepTimeFit fit = fit_step_times(log.records);
  CHECK(fit.nodes == 64);
  CHECK(fit.median_s == Approx(10).epsilon(0.002));
  REQUIRE(fit.slow_nodes.size() == 3);
  std::set<std::string> slow;
  for (const SlowNode& n : fit.slow_nodes) {
    slow.insert(n.node);
    CHECK(n.speed_factor == Approx(0.9).epsilon(0.01));
  }
  CHECK(slow == std::set<std::string>{"node-7", "node-21", "node-50"});
  CHECK(fit.slow_node_share.estimate == Approx(3.0 / 64));
  CHECK(fit.slow_node_share.lower < 3.0 / 64);
  CHECK(fit.slow_node_share.upper > 3.0 / 64);
  // The slow nodes' steps are 1.11x the median: with 1% noise about 84% of them clear 1.1x, and
  // healthy steps (10 sigma away) never do.
  CHECK(fit.slow_step_share.estimate == Approx(0.84 * 3 / 64).epsilon(0.05));
  // Clopper-Pearson against a known value: 0 of 10 at 95% has upper bound 1 - 0.025^(1/10).
  CHECK(binomial_share(0, 10).upper == Approx(1 - std::pow(0.025, 0.1)));
}

TEST_CASE("step logs: a node is compared with its pipeline stage, so a long last stage is not a set of slow nodes", "[calibration][readers]") {
  // 4 stages of 8 nodes; the last stage's section takes 1.3x (it holds the output layer); node-5
  // (stage 0) runs at half speed.
  boost::random::mt19937 rng(5);
  boost::random::lognormal_distribution<double> noise(0.0, 0.01);
  std::ostringstream with_stage, without;
  with_stage << "step,node,stage,duration_s\n";
  without << "step,node,duration_s\n";
  for (int step = 0; step < 100; ++step)
    for (int node = 0; node < 32; ++node) {
      const int stage = node / 8;
      const double t = 10.0 * noise(rng) * (stage == 3 ? 1.3 : 1.0) * (node == 5 ? 2.0 : 1.0);
      with_stage << step << ",node-" << node << "," << stage << "," << t << "\n";
      without << step << ",node-" << node << "," << t << "\n";
    }
  std::istringstream staged_in(with_stage.str()), flat_in(without.str());
  const StepTimeFit staged = fit_step_times(read_step_csv(staged_in, "staged.csv").records);
  CHECK(staged.peer_groups == 4);
  REQUIRE(staged.slow_nodes.size() == 1);
  CHECK(staged.slow_nodes[0].node == "node-5");
  CHECK(staged.slow_nodes[0].speed_factor == Approx(0.5).epsilon(0.02));  // against its stage
  // Without the stage, every node is compared with every node: the last stage reads as slow.
  const StepTimeFit flat = fit_step_times(read_step_csv(flat_in, "flat.csv").records);
  CHECK(flat.peer_groups == 0);
  CHECK(flat.slow_nodes.size() == 9);
}

TEST_CASE("kernel logs: every host's window is exposure, a clean log included, and a fleet in mid-life keeps count over exposure", "[calibration]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ctwin-fleet-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // Four one-day node logs; one Xid 13 in one of them; two logs have no Xid at all.
  std::vector<std::string> logs;
  for (int n = 0; n < 4; ++n) {
    const std::string path = (dir / ("node-" + std::to_string(n) + ".log")).string();
    std::ofstream out(path);
    out << "2024-03-01T00:00:00+0000 node-" << n << " kernel: Linux version 6.1\n";
    if (n == 1) out << "2024-03-01T12:00:00+0000 node-1 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=7, Graphics Exception\n";
    if (n == 2) out << "2024-03-01T13:00:00+0000 node-2 kernel: usb 1-1: new device\n";
    out << "2024-03-02T00:00:00+0000 node-" << n << " systemd[1]: Started daily clean-up.\n";
    logs.push_back(path);
  }
  CalibrateOptions options;
  const CalibrationResult four = calibrate(logs, options);
  std::map<std::string, nlohmann::ordered_json> classes;
  for (const auto& c : four.report["classes"]) classes[c["class"]] = c;
  // 1 fault over 4 nodes x 8 GPUs x 1 day: 11.4 per GPU-year, not 45.7 (one log's exposure).
  CHECK(classes.at("xid_13")["rate_per_gpu_year"]["estimate"].get<double>() == Approx(365.25 / 32).epsilon(1e-3));
  CHECK(four.report["traces"].size() == 4);

  // A fleet in mid-life: 400 hosts x 8 GPUs, 120 days, GPUs failing with Weibull(0.7) lives of mean
  // 1/(2 per GPU-year), each found at a random point of its life (the stationary residual).
  const double k = 0.7, window_days = 120, mean_days = 365.25 / 2, scale_days = mean_days / std::tgamma(1 + 1 / k);
  boost::random::mt19937 rng(2024);
  boost::random::uniform_01<double> uniform;
  boost::random::weibull_distribution<double> life(k, scale_days);
  const std::string fleet = (dir / "fleet.journal").string();
  {
    std::ofstream out(fleet);
    auto stamp = [](double day) {  // days since 2024-01-01 as an ISO 8601 time
      using namespace std::chrono;
      const auto s = static_cast<long long>(day * 86400);
      const year_month_day date{sys_days{2024y / January / 1} + std::chrono::days{s / 86400}};
      char text[48];
      std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02lld:%02lld:%02lld+0000", static_cast<int>(date.year()),
                    static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), s / 3600 % 24, s / 60 % 60, s % 60);
      return std::string(text);
    };
    for (int host = 0; host < 400; ++host) {
      out << stamp(0) << " h" << host << " kernel: Linux version 6.1\n";
      for (int gpu = 0; gpu < 8; ++gpu)
        for (double t = scale_days * std::pow(boost::math::gamma_q_inv(1 / k, uniform(rng)), 1 / k); t < window_days; t += life(rng))
          out << stamp(t) << " h" << host << " kernel: NVRM: Xid (PCI:0000:" << 10 + gpu << ":00): 79, GPU has fallen off the bus.\n";
      out << stamp(window_days) << " h" << host << " systemd[1]: Started daily clean-up.\n";
    }
  }
  const CalibrationResult r = calibrate({fleet}, options);
  nlohmann::ordered_json gpu;
  for (const auto& c : r.report["classes"])
    if (c["class"] == "xid79_fallen_off_bus") gpu = c;
  REQUIRE(gpu.is_object());
  INFO(gpu.dump(2));
  CHECK(gpu["rate_from"] == "count / exposure (exact Poisson interval)");
  CHECK(gpu["rate_per_gpu_year"]["estimate"].get<double>() == Approx(2.0).epsilon(0.05));
  CHECK(gpu["rate_per_gpu_year"]["lower"].get<double>() < 2.0);
  CHECK(gpu["rate_per_gpu_year"]["upper"].get<double>() > 2.0);
  CHECK(gpu["weibull"]["shape"]["estimate"].get<double>() == Approx(0.7).epsilon(0.15));
  CHECK(gpu["weibull"]["shape"]["lower"].get<double>() < 0.7);
  CHECK(gpu["weibull"]["shape"]["upper"].get<double>() > 0.7);
  CHECK(gpu["weibull"]["shape_one_p_value"].get<double>() < 0.01);
  // The calibrated scenario starts its parts in mid-life: a forecast's rate does not depend on its
  // horizon (tests/sim/test_part_ages.cpp).
  const Scenario s = parse_scenario(r.scenario.dump(), "calibrated");
  CHECK(s.parts_start_stationary);
  const auto f = std::find_if(s.faults.begin(), s.faults.end(), [](const FaultClass& c) { return c.name == "xid79_fallen_off_bus"; });
  REQUIRE(f != s.faults.end());
  CHECK(f->distribution == Distribution::Weibull);

  // Four failures are too few for a shape: the rate stays count over exposure, the class exponential.
  {
    std::ofstream out(logs[3], std::ios::app);
    for (int i = 0; i < 4; ++i)
      out << "2024-03-01T0" << i + 1 << ":00:00+0000 node-3 kernel: NVRM: Xid (PCI:0000:" << 10 + i << ":00): 13, pid=7, exception\n";
  }
  const CalibrationResult few = calibrate(logs, options);
  for (const auto& c : few.report["classes"])
    if (c["class"] == "xid_13") {
      CHECK(c["rate_from"] == "count / exposure (exact Poisson interval)");
      CHECK(c["rate_per_gpu_year"]["estimate"].get<double>() == Approx(5 * 365.25 / 32).epsilon(1e-3));
    }
  for (const FaultClass& c : parse_scenario(few.scenario.dump(), "few").faults) CHECK(c.distribution == Distribution::Exponential);
  fs::remove_all(dir);
}
