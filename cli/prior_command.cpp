#include "cli/prior_command.hpp"

#include <fstream>
#include <iostream>

#include "calibration/prior_fit.hpp"
#include "core/atomic_file.hpp"
#include "core/command_line.hpp"
#include "core/text_records.hpp"

namespace ctwin {

PriorCommand::PriorCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("prior", "fit the population prior of fleets' fault rates on a table of public fleets' counts (docs/model.md)");
  cmd_->add_option("table", table_, "fleets' counts: fleet,gpu,hbm_gb,gpus,nodes,days,class_group,count,in_fit (scenarios/sources/fleet_class_counts.csv)")
      ->required();
  cmd_->add_option("--out", out_, "write the prior (JSON: its draws and the fit's report) here")->required();
  cmd_->add_option("--name", name_, "the prior's name, which a calibrated scenario records");
  cmd_->add_option("--seed", seed_, "the chains' seed (the same seed, the same prior)");
  cmd_->add_option("--iterations", iterations_, "sweeps kept per chain (after a fifth as many warm-up sweeps, at least 1,000)")->check(CLI::Range(200, 10000000));
  cmd_->add_option("--sigma-prior", sigma_scale_, "half-normal scale of the two spreads' priors")->check(CLI::Range(0.05, 10.0));
  cmd_->add_option("--beta-prior", beta_mean_, "mean of the HBM slope's normal prior (1: errors in proportion to bits)")->check(CLI::Range(-5.0, 5.0));
  cmd_->add_option("--beta-prior-sd", beta_sd_, "its standard deviation")->check(CLI::Range(0.01, 10.0));
  cmd_->add_flag("--no-holdouts", no_holdouts_, "skip refitting with each fleet held out");
}

std::optional<int> PriorCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--out", out_)) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int PriorCommand::run() {
  std::ifstream in = open_trace(table_);
  const calib::FleetTable table = calib::read_fleet_table(in, table_);
  for (const auto& p : table.report.malformed) std::cerr << "ctwin: " << table_ << ": line " << p.line << ": " << p.reason << " (skipped)\n";
  calib::PriorFitOptions options;
  options.seed = seed_;
  options.iterations = iterations_;
  options.warmup = std::max(1000, iterations_ / 5);
  options.sigma_prior_scale = sigma_scale_;
  options.beta_prior_mean = beta_mean_;
  options.beta_prior_sd = beta_sd_;
  options.holdouts = !no_holdouts_;
  const calib::PriorFit fit = calib::fit_population_prior(table, name_, options);
  std::cout << calib::prior_text(fit.report);
  write_file_atomically(out_, calib::prior_document(fit).dump(1) + "\n");
  std::cout << "\n  wrote " << out_ << "\n";
  return 0;
}

}  // namespace ctwin
