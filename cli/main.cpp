//! ctwin: the command line. `ctwin run [SCENARIO]` forecasts goodput; `ctwin check SCENARIO` validates;
//! `ctwin catalog` lists the built-in fault classes.
//! Exit codes: 0 fine, 1 failure while running, 2 bad input (docs/cli.md).

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/command_line.hpp"
#include "core/invariant.hpp"
#include "core/version.hpp"
#include "cli/experiment_commands.hpp"
#include "cli/calibrate_command.hpp"
#include "cli/prior_command.hpp"
#include "cli/data_paths.hpp"
#include "cli/faults_command.hpp"
#include "cli/timeline_command.hpp"
#include "cli/step_command.hpp"
#include "cli/validate_command.hpp"
#include "live/commands/live_commands.hpp"
#include "live/commands/parse_command_line.hpp"
#include "models/fault_catalog.hpp"
#include "models/scenario_loader.hpp"
#include "core/mpi/mpi_session.hpp"
#include "core/ranks.hpp"
#include "sim/experiments.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/run_sensitivity.hpp"
#include "sim/step_cache.hpp"
#include "sim/step_sensitivity.hpp"
#include "core/atomic_file.hpp"
#include "report/engine_comparison.hpp"
#include "report/run_report.hpp"
#include "report/timeline.hpp"


namespace fs = std::filesystem;
using namespace ctwin;

namespace {

using cli::check_output_path;
using cli::kExitBadInput;

std::string default_scenario_path() { return cli::shipped_file("scenarios/default.json"); }

struct RunArgs {
  std::string scenario;
  std::optional<int> trials;
  std::optional<std::uint64_t> seed;
  std::string json, csv, events, timeline;
  std::string timeline_trial = "0";  //!< N, or pQ: the trial at goodput percentile Q
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string engine = "native";
  std::string contention = "on";
  std::string rate_uncertainty = "on";
  std::string step_uncertainty = "off";
  bool sensitivity = false;
};

int run_command(const RunArgs& args) {
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  Scenario scenario;
  try {
    scenario = load_scenario(path);
  } catch (const ScenarioInvalid& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  }
  bool paths_ok = true;
  for (const auto& [flag, p] : {std::pair<std::string, std::string>{"--json", args.json},
                                {"--csv", args.csv},
                                {"--events", args.events},
                                {"--timeline", args.timeline}})
    paths_ok &= check_output_path(flag, p);
  if (!paths_ok) return kExitBadInput;
  // --timeline-trial: an index, or a goodput percentile (the trial is picked once all have run).
  int recorded = 0;
  std::optional<double> percentile;
  {
    const std::string& t = args.timeline_trial;
    const bool is_percentile = !t.empty() && t[0] == 'p';
    const std::string digits = is_percentile ? t.substr(1) : t;
    const bool numeric = !digits.empty() && digits.size() <= 9 && std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    const int value = numeric ? std::stoi(digits) : -1;
    const int trials = args.trials.value_or(scenario.trials);
    if (!numeric || (is_percentile && value > 100) || (!is_percentile && value >= trials)) {
      std::cerr << "--timeline-trial: \"" << t << "\" is neither a trial index below " << trials
                << " nor a goodput percentile p0..p100 (e.g. p5, p50, p95)\n";
      return kExitBadInput;
    }
    if (is_percentile) percentile = value / 100.0;
    else recorded = value;
  }

  RunOptions options;
  options.trials = args.trials.value_or(scenario.trials);
  options.seed = args.seed.value_or(scenario.seed);
  options.jobs = args.jobs;
  // `both`: the report is SimGrid's (the reference physics), with the native engine's error beside it.
  options.engine = args.engine == "native" ? EngineKind::Native : EngineKind::Simgrid;
  options.record_events = (!args.events.empty() || !args.timeline.empty()) && !percentile;
  options.recorded_trial = recorded;
  options.contention = args.contention == "on";
  options.rate_uncertainty = args.rate_uncertainty == "on";
  // Memory flat in trials: the report reads the tally; whole trials only for the engines compared.
  options.keep_trials = args.engine == "both";
  options.keep_goodputs = percentile.has_value();
  options.tail = true;  // the report says what the low quantiles are made of

  return cli::run_reporting_errors([&] {
    resolve_step_time(scenario, path);  // after the cheap checks: it may simulate the fabric
    if (args.step_uncertainty == "on") {
      // A modelled step is drawn from its range; a stated one (a measured figure) is held.
      if (!scenario.workload) std::cerr << path << ": note: --step-uncertainty on: no workload, so no step model: the step is held\n";
      else if (!scenario.job.step_modelled()) std::cerr << path << ": note: --step-uncertainty on: the step time is stated (job.step_time): it is held\n";
      else {
        const StepRange range = step_sensitivity(*scenario.workload, scenario.cluster.gpus_per_node, scenario.cluster.gpu_memory_bytes,
                                                 StepCache::shared()).range;
        options.step_draw = RunOptions::StepDraw{range.min_s / range.point_s, range.max_s / range.point_s, scenario.job.work_steps.has_value()};
      }
    }
    // Said before the trials start: they may take long.
    if (const auto w = trial_cost_warning(scenario, make_trial_config(scenario, resolve_checkpoint_costs(scenario)), options.trials))
      std::cerr << path << ": warning: " << *w << "\n";
    // Every trial's row goes to the CSV as the run takes it; the file appears when all are in.
    std::optional<AtomicFileWriter> csv;
    if (!args.csv.empty()) {
      csv.emplace(args.csv);
      csv->write(trials_csv_header(scenario));
      options.on_trial = [&csv](int index, const TrialResult& t) { csv->write(trials_csv_row(index, t)); };
    }
    RunResult result = run_trials(scenario, options);
    options.on_trial = nullptr;
    if (percentile && (!args.events.empty() || !args.timeline.empty())) {
      // Trial i draws from its own seed whatever else runs: running it alone again gives its events.
      RunOptions one = options;
      one.first_trial = recorded = trial_at_goodput_quantile(result.tally.goodputs(), *percentile);
      one.trials = 1;
      one.jobs = 1;
      one.record_events = true;
      one.recorded_trial = recorded;
      one.keep_goodputs = false;
      RunResult again = run_trials(scenario, one);
      result.recorded_events = std::move(again.recorded_events);
      result.recorded = std::move(again.recorded);
    }
    for (const auto& w : checkpoint_warnings(result.config)) std::cerr << path << ": warning: " << w << "\n";
    if (const auto w = window_warning(scenario, result)) std::cerr << path << ": warning: " << *w << "\n";
    std::optional<EngineComparison> comparison;
    if (args.engine == "both") {
      RunOptions native = options;
      native.engine = EngineKind::Native;
      native.record_events = false;
      comparison = compare_engines(run_trials(scenario, native), result);
    }
    // Each assumed field over its range, on the run's own trial seeds (paired with its goodputs).
    std::optional<RunSensitivity> sensitivity;
    if (args.sensitivity)
      sensitivity = run_sensitivity(read_scenario_document(path), path, scenario, options, result.tally.goodputs(),
                                    result.tally.goodput().summary());
    const RunReportInput report{scenario, options, result, sensitivity ? &*sensitivity : nullptr};
    // Everything is rendered before anything is written.
    std::vector<std::pair<std::string, std::string>> outputs;
    if (!args.json.empty()) {
      if (comparison) {
        auto j = nlohmann::ordered_json::parse(report_json(report));
        j["native_approximation_error"] = engine_comparison_json(*comparison);
        outputs.emplace_back(args.json, j.dump(2) + "\n");
      } else {
        outputs.emplace_back(args.json, report_json(report));
      }
    }
    if (!args.events.empty()) outputs.emplace_back(args.events, trial_event_log(scenario, result.recorded_events, result.recorded));
    if (!args.timeline.empty())
      outputs.emplace_back(args.timeline, timeline_json(scenario, result.config, result.recorded_events, recorded));
    for (const auto& [file, content] : outputs) write_file_atomically(file, content);
    if (csv) csv->commit();
    std::cout << summary_text(report);
    if (comparison) std::cout << engine_comparison_text(*comparison);
    return 0;
  });
}

int check_command(const std::string& path) {
  return cli::run_reporting_errors([&] {
    const Scenario s = load_scenario(path);
    std::cout << path << ": valid (scenario \"" << s.name << "\", " << s.faults.size() << " fault classes, content "
              << s.content_hash << ")\n";
    const TrialConfig config = make_trial_config(s, resolve_checkpoint_costs(s));  // the persist's cost may come from the storage model
    for (const auto& w : checkpoint_warnings(config)) std::cerr << path << ": warning: " << w << "\n";
    if (const auto w = trial_cost_warning(s, config, s.trials)) std::cerr << path << ": warning: " << *w << "\n";
    return 0;
  });
}

int catalog_command(const std::string& json) {
  if (!json.empty()) {  // a report like the others: its versions, then the classes as a scenario takes them
    if (!cli::check_output_path("--json", json)) return cli::kExitBadInput;
    const nlohmann::ordered_json report{{"schema_version", 1}, {"ctwin_version", kCtwinVersion}, {"command", "catalog"},
                                        {"classes", fault_catalog()}};
    write_file_atomically(json, report.dump(2) + "\n");
    return 0;
  }
  std::cout << "Built-in fault classes: use one in a scenario as {\"use\": \"NAME\"} and override any field.\n"
               "Sources: [L3] Llama 3 paper (arXiv 2407.21783) Table 5, 54 days on 16,384 H100; [NV] NVIDIA Xid catalog;\n"
               "[BR] ByteRobust (arXiv 2509.16293) Table 3; [DL] DLRover (commit 7c3e964); [BL] BLOOM-176B logbook;\n"
               "[A] an assumption with no public figure behind it. Copies in scenarios/sources/.\n\n";
  for (const auto& e : fault_catalog()) {
    const std::string rate = e.contains("rate") ? e["rate"].get<std::string>() : "(give a rate)";
    std::string action = e["recovery"]["action"].get<std::string>();
    if (e.contains("escalation")) action += " -> " + e["escalation"]["action"].get<std::string>();
    char line[200];
    std::snprintf(line, sizeof line, "  %-22s %-18s %-6s %-20s detection %s\n", e["name"].get<std::string>().c_str(),
                  rate.c_str(), e["effect"].get<std::string>().c_str(), action.c_str(),
                  e["detection"].get<std::string>().c_str());
    std::cout << line << "      " << e["source"].get<std::string>() << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun the decision tools spread their trials over the ranks; rank 0 alone prints and writes.
  MpiSession mpi(argc, argv);
  if (!Ranks::world().is_root()) std::cout.setstate(std::ios::failbit);
  CLI::App app{"ctwin: a digital twin of large LLM training clusters"};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();  // --help shows each option's default
  app.set_version_flag("--version", std::string("ctwin ") + kCtwinVersion + " (scenario schema 1, report schema 1)");

  RunArgs run;
  CLI::App* run_cmd = app.add_subcommand("run", "Monte Carlo goodput forecast of a scenario");
  run_cmd->add_option("scenario", run.scenario, "scenario file (default: scenarios/default.json)");
  run_cmd->add_option("--trials", run.trials, "number of trials (default: the scenario's; at most 10,000,000)")->check(CLI::Range(1, kMaxTrials));
  run_cmd->add_option("--seed", run.seed, "run seed; trial i uses splitmix64(splitmix64(seed) + i)");
  run_cmd->add_option("--json", run.json, "write the JSON report here");
  run_cmd->add_option("--csv", run.csv, "write one CSV row per trial here");
  run_cmd->add_option("--events", run.events, "write one trial's event log (CSV) here (--timeline-trial picks it)");
  run_cmd->add_option("--timeline", run.timeline, "write one trial's Chrome trace-event timeline here (Perfetto), one track per node");
  run_cmd->add_option("--timeline-trial", run.timeline_trial,
                      "the trial --timeline and --events show: an index N, or p5, p50, p95 (any pQ): the trial at that goodput percentile");
  run_cmd->add_option("--jobs", run.jobs, "parallel workers (results do not depend on it)")->check(CLI::Range(1, 4096));
  run_cmd->add_option("--engine", run.engine,
                      "native (default: checkpoint transfers in closed form), simgrid (run on the fabric in each "
                      "trial's state), or both (SimGrid's report and the native engine's error)")
      ->check(CLI::IsMember({"native", "simgrid", "both"}));
  run_cmd->add_option("--contention", run.contention, "on (default): persists share links with training; off: they do not")
      ->check(CLI::IsMember({"on", "off"}));
  run_cmd->add_option("--rate-uncertainty", run.rate_uncertainty,
                      "on (default): each trial draws the rates from their uncertainty (a scenario's rate_uncertainty), and the "
                      "predictive interval has it; off: the rates are held exact")
      ->check(CLI::IsMember({"on", "off"}));
  run_cmd->add_option("--step-uncertainty", run.step_uncertainty,
                      "on: each trial draws a modelled step time from its range over what the workload left assumed "
                      "(ctwin step prints it), log-triangular with its mode at the point; off (default): the point. A stated "
                      "job.step_time is held either way")
      ->check(CLI::IsMember({"on", "off"}));
  run_cmd->add_flag("--sensitivity", run.sensitivity,
                    "goodput over the plausible range of each assumed field (spare nodes, repair time, fleet spread, rate "
                    "uncertainty, detection times, restart overhead), one at a time on the same trials; names the one that moves it most");

  std::string check_path;
  CLI::App* check_cmd = app.add_subcommand("check", "validate a scenario file");
  check_cmd->add_option("scenario", check_path, "scenario file")->required();

  ExperimentCommands experiments(app);
  StepCommand step(app);
  CalibrateCommand calibrate(app);
  PriorCommand prior(app);
  ValidateCommand validate(app);
  FaultsCommand faults(app);
  TimelineCommand timeline(app);
  CLI::App* live_cmd = app.add_subcommand("live", "live mode on real nodes: prechecks, checkpoints, supervision (also: ctwin-live)");
  live_cmd->require_subcommand(1);
  LiveCommands live(*live_cmd, " live");

  std::string catalog_json;
  CLI::App* catalog_cmd = app.add_subcommand("catalog", "list the built-in fault classes and their sources");
  catalog_cmd->add_option("--json", catalog_json, "write them as JSON here (- for stdout)");

  // One example a command, shown under its --help.
  const std::pair<const char*, const char*> examples[] = {
      {"run", "ctwin run scenarios/llama3_405b_16k.json --trials 1000 --json report.json   (--json - for stdout)"},
      {"check", "ctwin check scenarios/default.json"},
      {"sweep", "ctwin sweep scenarios/default.json --set /policies/checkpoint/interval=5min,10min,30min --svg sweep.svg"},
      {"optimize", "ctwin optimize scenarios/default.json --ci-target 0.001 --svg optimum.svg"},
      {"compare", "ctwin compare scenarios/default.json --variant 'daly:/policies/checkpoint={\"type\":\"daly\"}'"},
      {"step", "ctwin step scenarios/megascale_175b.json --dp-width 2 --json step.json"},
      {"calibrate", "ctwin calibrate /var/log/kern.log --base scenarios/default.json --out fitted.json --report fits.json"},
      {"validate", "ctwin validate scenarios/default.json --against run.csv   (run.csv: ctwin run --events, or a live job's log)"},
      {"faults", "ctwin faults scenarios/default.json --until 7d --json strikes.json"},
      {"timeline", "ctwin timeline job-events.csv --out job-timeline.json   (a live job's log, or ctwin run --events)"},
      {"catalog", "ctwin catalog --json catalog.json   (--json - for stdout)"},
  };
  for (const auto& [name, example] : examples) app.get_subcommand(name)->footer(std::string("\nExample:\n  ") + example);
  app.footer("\nExample:\n  ctwin run    (the default scenario, scenarios/default.json)\n  ctwin <command> --help");

  auto dispatch = [&]() -> int {
    if (*run_cmd) return Ranks::world().is_root() ? run_command(run) : 0;  // `run` is one process: --jobs spreads it
    if (*check_cmd) return check_command(check_path);
    if (*catalog_cmd) return catalog_command(catalog_json);
    if (auto code = experiments.dispatch()) return *code;
    if (auto code = step.dispatch()) return *code;
    if (auto code = calibrate.dispatch()) return *code;
    if (auto code = prior.dispatch()) return *code;
    if (auto code = validate.dispatch()) return *code;
    if (auto code = faults.dispatch()) return *code;
    if (auto code = timeline.dispatch()) return *code;
    if (*live_cmd)
      if (auto code = live.dispatch()) return *code;
    return kExitBadInput;
  };
  if (const auto code = parse_command_line(app, argc, argv)) return *code;
  try {
    return dispatch();
  } catch (const InvariantBroken& e) {  // a bug: no report is written with a number it would have made wrong
    std::cerr << "ctwin: " << e.what() << "\n";
    return kExitFailure;
  }
}
