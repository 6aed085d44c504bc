#include "cli/faults_command.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "core/atomic_file.hpp"
#include "core/command_line.hpp"
#include "core/rng.hpp"
#include "models/fault_timeline.hpp"
#include "models/remediation.hpp"
#include "models/scenario_loader.hpp"

namespace ctwin {

FaultsCommand::FaultsCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("faults", "the fault timeline one trial draws (what `run` and `validate` simulate; what the twin loop injects)");
  cmd_->add_option("scenario", scenario_, "scenario file")->required();
  cmd_->add_option("--seed", seed_, "run seed (as `run --seed` and `validate --seed`; default 1)");
  cmd_->add_option("--trial", trial_, "trial index (default 0): seed splitmix64(splitmix64(S) + i)");
  cmd_->add_option("--until", until_, "strikes up to this time (default: the scenario's horizon, else 1 h)");
  cmd_->add_option("--rate-uncertainty", rate_uncertainty_,
                   "on (default, as run and validate): the trial first draws its rates from their uncertainty; off: held exact")
      ->check(CLI::IsMember({"on", "off"}));
  cmd_->add_option("--json", json_, "write the timeline (JSON) here");
}

std::optional<int> FaultsCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--json", json_)) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int FaultsCommand::run() {
  const Scenario scenario = load_scenario(scenario_);
  double until_s = scenario.job.horizon_us ? static_cast<double>(*scenario.job.horizon_us) / 1e6 : 3600.0;
  if (!cli::parse_positive_seconds(until_, "--until", until_s)) return cli::kExitBadInput;
  const std::uint64_t seed = trial_seed(seed_, trial_);
  // The trial's own rates first, as run and validate draw them (the same seed, the same draw).
  const FaultTimelineModel nominal = FaultTimelineModel::from(scenario);
  const bool drawn = rate_uncertainty_ == "on" && nominal.rates_uncertain();
  const FaultTimelineModel model = drawn ? nominal.with_rates_drawn(seed) : nominal;
  FaultTimeline timeline(model, seed);
  nlohmann::ordered_json strikes = nlohmann::ordered_json::array();
  std::cout << "time_s      class                 effect  action      slot  gpu\n";
  while (static_cast<double>(timeline.peek().time) / 1e6 <= until_s) {
    const FaultStrike s = timeline.pop();
    const FaultClass& fc = scenario.faults[s.fault_class];
    const double t = static_cast<double>(s.time) / 1e6;
    nlohmann::ordered_json row{{"time_s", t}, {"class", fc.name}, {"effect", to_string(fc.effect)}, {"action", to_string(fc.action)},
                               {"component", to_string(fc.rate.component)}, {"slot", s.slot}, {"gpu", s.gpu}};
    if (s.node >= 0) row["node"] = s.node;  // a lemon's extra fault names its physical node
    strikes.push_back(row);
    char line[160];
    std::snprintf(line, sizeof line, "%-11.3f %-21s %-7s %-11s %4d %4d\n", t, fc.name.c_str(), to_string(fc.effect), to_string(fc.action), s.slot, s.gpu);
    std::cout << line;
  }
  std::cout << strikes.size() << " strikes in " << until_s << " s (scenario \"" << scenario.name << "\", seed " << seed_ << ", trial " << trial_
            << (drawn ? ", rates drawn" : "") << ")\n";
  if (!json_.empty()) {
    const nlohmann::ordered_json report{{"schema_version", 1}, {"ctwin_version", kCtwinVersion}, {"command", "faults"}, {"scenario", scenario.name}, {"content_hash", scenario.content_hash},
                                        {"seed", seed_},               {"trial", trial_},           {"until_s", until_s}, {"rates_drawn", drawn},
                                        {"job_nodes", scenario.job.nodes}, {"strikes", strikes}};
    write_file_atomically(json_, report.dump(2) + "\n");
  }
  return 0;
}

}  // namespace ctwin
