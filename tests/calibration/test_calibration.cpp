// Calibration: the estimators against known answers, calibrate on fleet records, and the round
// trip: the simulator writes an event log from known parameters (a Weibull shape of 0.7 among them)
// and `ctwin calibrate` recovers them within their intervals. The readers: test_trace_readers.cpp.
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
          "[calibration][cli][process]") {
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
      calibrate({test::trace_file("gpu-017.dmesg"), test::trace_file("fleet.journal"), test::trace_file("jobs.sacct"), test::trace_file("incidents.csv")}, options);
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

TEST_CASE("public records: the committed incident tables are the script's, and BLOOM and ByteRobust calibrate", "[calibration][cli][process]") {
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
  const double weekly = 365.0 / 7 / 384;  // one GPU a week among 384, per GPU-year
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
      CHECK(rate["estimate"].get<double>() == Approx(19968 / (200000 * 91.3125) * 365).epsilon(1e-4));
      CHECK((rate["upper"].get<double>() - rate["lower"].get<double>()) / rate["estimate"].get<double>() < 0.03);
    }
  fs::remove_all(dir);
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
  CHECK(classes.at("xid_13")["rate_per_gpu_year"]["estimate"].get<double>() == Approx(365.0 / 32).epsilon(1e-3));
  CHECK(four.report["traces"].size() == 4);

  // A fleet in mid-life: 400 hosts x 8 GPUs, 120 days, GPUs failing with Weibull(0.7) lives of mean
  // 1/(2 per GPU-year), each found at a random point of its life (the stationary residual).
  const double k = 0.7, window_days = 120, mean_days = 365.0 / 2, scale_days = mean_days / std::tgamma(1 + 1 / k);
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
      CHECK(c["rate_per_gpu_year"]["estimate"].get<double>() == Approx(5 * 365.0 / 32).epsilon(1e-3));
    }
  for (const FaultClass& c : parse_scenario(few.scenario.dump(), "few").faults) CHECK(c.distribution == Distribution::Exponential);
  fs::remove_all(dir);
}
