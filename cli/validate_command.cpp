#include "cli/validate_command.hpp"

#include <fstream>
#include <iostream>
#include <thread>

#include "calibration/observed_run.hpp"
#include "calibration/validation.hpp"
#include "core/command_line.hpp"
#include "core/event_log.hpp"
#include "models/scenario_loader.hpp"
#include "core/atomic_file.hpp"
#include "report/validation_report.hpp"
#include "sim/step_cache.hpp"

namespace ctwin {

ValidateCommand::ValidateCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("validate", "simulate the period an event log covers and judge each observed figure against the trials");
  cmd_->add_option("scenario", scenario_, "scenario (e.g. from ctwin calibrate)")->required();
  cmd_->add_option("--against", against_, "event log of the run: ctwin run --events, or the live controller's")->required();
  cmd_->add_option("--trials", trials_, "simulated runs of the traced period")->check(CLI::Range(2, 1000000));
  cmd_->add_option("--seed", seed_, "run seed");
  cmd_->add_option("--jobs", jobs_, "parallel workers (results do not depend on it)")->check(CLI::Range(1, 4096));
  cmd_->add_option("--engine", engine_, "native (default) or simgrid")->check(CLI::IsMember({"native", "simgrid"}));
  cmd_->add_option("--confidence", confidence_, "share of single trials an observed figure must fall among")->check(CLI::Range(0.5, 0.9999));
  cmd_->add_option("--rate-uncertainty", rate_uncertainty_,
                   "both (default): two verdicts, 'could this scenario have produced this run' (on: rates drawn from their "
                   "uncertainty) and 'does this fleet behave as the scenario's rates say' (off: rates held exact)")
      ->check(CLI::IsMember({"on", "off", "both"}));
  cmd_->add_option("--json", json_, "write the comparison (JSON) here");
  jobs_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::optional<int> ValidateCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--json", json_)) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int ValidateCommand::run() {
  Scenario scenario = load_scenario(scenario_);
  std::ifstream in = open_trace(against_);
  const std::string head = first_line(against_);
  if (!looks_like_event_log(head))
    throw TraceUnreadable(against_ + ": line 1: validate needs an event log (header " + std::string(kEventLogHeader) + ")");
  const EventLog log = read_event_log(in, against_);
  log.report.require_some();
  // A live log's start-up (rendezvous, first launch) is not what the scenario models: its trials
  // begin with the job running.
  const calib::ObservedRun observed = calib::without_startup(calib::observe_run(log));
  if (observed.wall_s <= 0) throw TraceUnreadable(against_ + ": the run lasts no time");
  resolve_step_time(scenario, scenario_);
  scenario = over_traced_period(std::move(scenario), observed);

  ValidateOptions options;
  options.run.trials = trials_;
  options.run.seed = seed_;
  options.run.jobs = jobs_;
  options.run.engine = engine_ == "simgrid" ? EngineKind::Simgrid : EngineKind::Native;
  options.confidence = confidence_;
  if (rate_uncertainty_ == "on") options.questions = {ValidationQuestion::Produced};
  if (rate_uncertainty_ == "off") options.questions = {ValidationQuestion::Behaves};
  const nlohmann::ordered_json report = validate_against(scenario, observed, options);
  if (!log.report.malformed.empty())
    std::cerr << "ctwin: " << against_ << ": " << log.report.malformed.size() << " malformed line(s) skipped (first at line "
              << log.report.malformed.front().line << ": " << log.report.malformed.front().reason << ")\n";
  if (!json_.empty()) write_file_atomically(json_, report.dump(2) + "\n");
  std::cout << validation_text(report);
  return 0;
}

}  // namespace ctwin
