#include "cli/calibrate_command.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "calibration/calibrate.hpp"
#include "core/text_records.hpp"
#include "core/command_line.hpp"
#include "core/atomic_file.hpp"
#include "sim/report/svg_plot.hpp"

namespace ctwin {

namespace {

std::vector<double> numbers(const nlohmann::ordered_json& array) { return array.get<std::vector<double>>(); }

//! Fitted CDFs (dashed in spirit: lines) against the empirical one (points).
Plot cdf_plot(const std::string& title, const nlohmann::ordered_json& cdf, const std::vector<std::string>& models) {
  Plot plot;
  plot.title = title;
  plot.x_label = "hours";
  plot.y_label = "fraction failed by then";
  plot.log_x = true;
  PlotSeries empirical{"empirical (Kaplan-Meier)", numbers(cdf["hours"]), numbers(cdf["empirical"]), {}, {}, false};
  plot.series.push_back(empirical);
  for (const std::string& m : models)
    if (cdf.contains(m)) plot.series.push_back({m + " fit", numbers(cdf["hours"]), numbers(cdf[m]), {}, {}, true});
  return plot;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> calibration_plots(const nlohmann::ordered_json& report) {
  std::vector<std::pair<std::string, std::string>> out;
  // Rates by class with their intervals, one plot per exposure unit (log scale: they span decades).
  for (const char* component : {"gpu", "node"}) {
    Plot plot;
    plot.title = std::string("fitted rates per ") + component + "-year, with " +
                 std::to_string(static_cast<int>(std::lround(100 * report["confidence"].get<double>()))) + "% intervals";
    plot.y_label = std::string("failures per ") + component + "-year";
    plot.log_y = true;
    PlotSeries rates{"", {}, {}, {}, {}, false};
    for (const auto& c : report["classes"]) {
      const auto& rate = c["rate_per_" + c["component"].get<std::string>() + "_year"];
      if (c["component"] != component || !(rate["estimate"].get<double>() > 0)) continue;
      rates.x.push_back(static_cast<double>(plot.x_labels.size()));
      plot.x_labels.push_back(c["class"].get<std::string>());
      rates.y.push_back(rate["estimate"].get<double>());
      rates.y_low.push_back(std::max(rate["lower"].get<double>(), 1e-3 * rate["estimate"].get<double>()));  // a log axis has no 0
      rates.y_high.push_back(rate["upper"].get<double>());
    }
    if (rates.x.empty()) continue;
    plot.series.push_back(rates);
    out.emplace_back(std::string("rates_") + component + ".svg", plot_svg(plot));
  }
  for (const auto& c : report["classes"])
    if (c.contains("lifetime_cdf"))
      out.emplace_back("lifetimes_" + c["class"].get<std::string>() + ".svg",
                       plot_svg(cdf_plot(c["class"].get<std::string>() + ": lifetimes", c["lifetime_cdf"], {"weibull", "exponential"})));
  for (const char* durations : {"repair_hours", "recovery_hours"})
    if (report.contains(durations) && report[durations].contains("cdf"))
      out.emplace_back(std::string(durations) + ".svg", plot_svg(cdf_plot(durations, report[durations]["cdf"], {"lognormal"})));
  return out;
}

CalibrateCommand::CalibrateCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("calibrate", "fit a scenario to fleet traces: Xid kernel logs, sacct records, event logs, incident tables");
  cmd_->add_option("traces", traces_, "trace files (the kind is recognised from the first line)")->required();
  cmd_->add_option("--base", base_, "scenario whose classes, cluster and job the fit updates");
  cmd_->add_option("--out", out_, "write the calibrated scenario here")->required();
  cmd_->add_option("--report", report_, "write the fits (JSON) here");
  cmd_->add_option("--plots", plots_, "write SVG plots here (an existing directory): rates by class, fitted against empirical CDFs");
  cmd_->add_option("--year", year_, "year of syslog lines, which carry none")->check(CLI::Range(1970, 9999));
  cmd_->add_option("--gpus-per-node", gpus_per_node_, "without --base")->check(CLI::Range(1, 1024));
  cmd_->add_option("--dedupe", dedupe_s_, "seconds within which a repeated Xid on one GPU is the same fault")->check(CLI::Range(0.0, 1e9));
  cmd_->add_option("--confidence", confidence_, "of the intervals")->check(CLI::Range(0.5, 0.9999));
}

std::optional<int> CalibrateCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--out", out_) || !cli::check_output_path("--report", report_)) return cli::kExitBadInput;
  if (!plots_.empty() && !cli::check_output_path("--plots", (std::filesystem::path(plots_) / "rates.svg").string())) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int CalibrateCommand::run() {
  calib::CalibrateOptions options;
  if (!base_.empty()) options.base = base_;
  options.year = year_;
  options.gpus_per_node = gpus_per_node_;
  options.dedupe_s = dedupe_s_;
  options.confidence = confidence_;
  const calib::CalibrationResult result = calib::calibrate(traces_, options);
  const auto& r = result.report;
  std::cout << "ctwin calibrate: " << traces_.size() << " trace(s)\n";
  for (const auto& t : r["traces"]) {
    std::cout << "  " << t["file"].get<std::string>() << "  (" << t["kind"].get<std::string>() << "): " << t["records"] << " records, "
              << t["skipped"] << " skipped, " << t["malformed"] << " malformed\n";
    if (t.contains("malformed_lines"))
      for (const auto& m : t["malformed_lines"])
        std::cout << "      line " << m["line"] << ": " << m["reason"].get<std::string>() << "\n";
  }
  std::cout << "\n  class                          count   rate per component-year [" << 100 * confidence_ << "% CI]\n";
  for (const auto& c : r["classes"]) {
    const auto& rate = c["rate_per_" + c["component"].get<std::string>() + "_year"];
    char line[200];
    std::snprintf(line, sizeof line, "  %-28s %7.0f   %.4g [%.4g, %.4g] /%s-year", c["class"].get<std::string>().c_str(),
                  c["count"].get<double>(), rate["estimate"].get<double>(), rate["lower"].get<double>(), rate["upper"].get<double>(),
                  c["component"].get<std::string>().c_str());
    std::cout << line;
    if (c.contains("weibull"))
      std::printf("   Weibull shape %.2f [%.2f, %.2f], p(shape=1) %.3g", c["weibull"]["shape"]["estimate"].get<double>(),
                  c["weibull"]["shape"]["lower"].get<double>(), c["weibull"]["shape"]["upper"].get<double>(),
                  c["weibull"]["shape_one_p_value"].get<double>());
    std::cout << std::flush << "\n";
  }
  if (r.contains("job_mttf_vs_size") && !r["job_mttf_vs_size"]["exponent"].is_null())
    std::printf("\n  job MTTF against size: exponent %.2f [%.2f, %.2f] (1 is the 1/(N r) law)\n",
                r["job_mttf_vs_size"]["exponent"]["estimate"].get<double>(), r["job_mttf_vs_size"]["exponent"]["lower"].get<double>(),
                r["job_mttf_vs_size"]["exponent"]["upper"].get<double>());
  if (r.contains("step_times")) {
    const auto& st = r["step_times"];
    const auto& share = st["slow_steps"]["share"];
    std::printf("\n  step times: %zu records, median %.4g s (p95 %.4g s, p99 %.4g s); steps over %.2gx the median: %.3g%% [%.3g%%, %.3g%%]\n",
                st["records"].get<std::size_t>(), st["median_s"].get<double>(), st["p95_s"].get<double>(), st["p99_s"].get<double>(),
                st["slow_steps"]["above_median_times"].get<double>(), 100 * share["estimate"].get<double>(),
                100 * share["lower"].get<double>(), 100 * share["upper"].get<double>());
    if (st.contains("slow_nodes")) {
      const auto& nodes = st["slow_node_share"];
      std::printf("  slow nodes: %zu of %zu, share %.3g%% [%.3g%%, %.3g%%]", st["slow_nodes"].size(), st["nodes"].get<std::size_t>(),
                  100 * nodes["estimate"].get<double>(), 100 * nodes["lower"].get<double>(), 100 * nodes["upper"].get<double>());
      for (const auto& n : st["slow_nodes"]) std::printf("  %s at %.3g", n["node"].get<std::string>().c_str(), n["speed_factor"].get<double>());
      std::printf("\n");
    }
  }
  if (!r["lemons"].empty()) std::cout << "\n  lemons: " << r["lemons"].size() << " node(s) with improbably many faults\n";
  std::fflush(stdout);
  std::vector<std::pair<std::string, std::string>> outputs{{out_, result.scenario.dump(2) + "\n"}};
  if (!report_.empty()) outputs.emplace_back(report_, r.dump(2) + "\n");
  if (!plots_.empty())
    for (auto& [name, svg] : calibration_plots(r)) outputs.emplace_back((std::filesystem::path(plots_) / name).string(), std::move(svg));
  for (const auto& [path, content] : outputs) write_file_atomically(path, content);
  std::cout << "\n  wrote " << out_ << (report_.empty() ? "" : " and " + report_)
            << (plots_.empty() ? "" : ", plots in " + plots_ + "/") << "\n";
  return 0;
}

}  // namespace ctwin
