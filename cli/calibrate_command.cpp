#include "cli/calibrate_command.hpp"

#include <cstdio>
#include <iostream>

#include "calibration/calibrate.hpp"
#include "calibration/readers/trace.hpp"
#include "cli/cli_common.hpp"
#include "sim/report/atomic_file.hpp"

namespace ctwin {

CalibrateCommand::CalibrateCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("calibrate", "fit a scenario to fleet traces: Xid kernel logs, sacct records, event logs, incident tables");
  cmd_->add_option("traces", traces_, "trace files (the kind is recognised from the first line)")->required();
  cmd_->add_option("--base", base_, "scenario whose classes, cluster and job the fit updates");
  cmd_->add_option("--out", out_, "write the calibrated scenario here")->required();
  cmd_->add_option("--report", report_, "write the fits (JSON) here");
  cmd_->add_option("--year", year_, "year of syslog lines, which carry none")->check(CLI::Range(1970, 9999));
  cmd_->add_option("--gpus-per-node", gpus_per_node_, "without --base")->check(CLI::Range(1, 1024));
  cmd_->add_option("--dedupe", dedupe_s_, "seconds within which a repeated Xid on one GPU is the same fault")->check(CLI::Range(0.0, 1e9));
  cmd_->add_option("--confidence", confidence_, "of the intervals")->check(CLI::Range(0.5, 0.9999));
}

std::optional<int> CalibrateCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--out", out_) || !cli::check_output_path("--report", report_)) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] {
    try {
      return run();
    } catch (const calib::TraceUnreadable& e) {
      std::cerr << "ctwin: " << e.what() << "\n";
      return cli::kExitBadInput;
    }
  });
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
  if (!r["lemons"].empty()) std::cout << "\n  lemons: " << r["lemons"].size() << " node(s) with improbably many faults\n";
  std::fflush(stdout);
  write_file_atomically(out_, result.scenario.dump(2) + "\n");
  if (!report_.empty()) write_file_atomically(report_, r.dump(2) + "\n");
  std::cout << "\n  wrote " << out_ << (report_.empty() ? "" : " and " + report_) << "\n";
  return 0;
}

}  // namespace ctwin
