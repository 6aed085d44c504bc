#include "cli/calibrate_command.hpp"

#include <filesystem>
#include <iostream>

#include "calibration/calibrate.hpp"
#include "cli/data_paths.hpp"
#include "core/text_records.hpp"
#include "core/command_line.hpp"
#include "core/atomic_file.hpp"
#include "report/calibration_report.hpp"

namespace ctwin {

CalibrateCommand::CalibrateCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("calibrate", "fit a scenario to fleet traces: Xid kernel logs, sacct records, event logs, incident tables");
  cmd_->add_option("traces", traces_, "trace files (the kind is recognised from the first line); none, with --base: the population's "
                                      "forecast for a fleet like the base's (the prior, nothing of its own)");
  cmd_->add_option("--base", base_, "scenario whose classes, cluster and job the fit updates");
  cmd_->add_option("--out", out_, "write the calibrated scenario here")->required();
  cmd_->add_option("--prior", prior_,
                   "population prior the base's grouped classes are pooled with (default: the shipped scenarios/priors/public_fleets.json); "
                   "none: each class from its own count")->default_str(cli::kShippedPrior);
  cmd_->add_option("--report", report_, "write the fits (JSON) here");
  cmd_->add_option("--plots", plots_, "write SVG plots here (an existing directory): rates by class, fitted against empirical CDFs");
  cmd_->add_option("--year", year_, "year of syslog lines, which carry none")->check(CLI::Range(1970, 9999));
  cmd_->add_option("--gpus-per-node", gpus_per_node_, "without --base")->check(CLI::Range(1, 1024));
  cmd_->add_option("--dedupe", dedupe_s_, "seconds within which a repeated Xid on one GPU is the same fault")->check(CLI::Range(0.0, 1e9));
  cmd_->add_option("--confidence", confidence_, "of the intervals")->check(CLI::Range(0.5, 0.9999));
  cmd_->add_flag("--slow-nodes-without-stages", slow_nodes_without_stages_,
                 "write a step log's slow nodes into the scenario even when it names no stage or role (its nodes do alike work)");
}

std::optional<int> CalibrateCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--out", out_) || !cli::check_output_path("--report", report_)) return cli::kExitBadInput;
  if (traces_.empty() && base_.empty()) {
    std::cerr << "ctwin: calibrate needs traces, or --base to take the population prior alone\n";
    return cli::kExitBadInput;
  }
  if (!plots_.empty() && !cli::check_output_path("--plots", (std::filesystem::path(plots_) / "rates.svg").string())) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int CalibrateCommand::run() {
  calib::CalibrateOptions options;
  if (!base_.empty()) options.base = base_;
  if (prior_ != "none") options.prior = prior_.empty() ? cli::shipped_file(cli::kShippedPrior) : prior_;
  options.year = year_;
  options.gpus_per_node = gpus_per_node_;
  options.dedupe_s = dedupe_s_;
  options.confidence = confidence_;
  options.slow_nodes_without_stages = slow_nodes_without_stages_;
  const calib::CalibrationResult result = calib::calibrate(traces_, options);
  const auto& r = result.report;
  std::cout << calibration_text(r, traces_.size(), confidence_) << std::flush;
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
