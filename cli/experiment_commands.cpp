#include "cli/experiment_commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/command_line.hpp"
#include "models/scenario_loader.hpp"
#include "core/units.hpp"
#include "core/ranks.hpp"
#include "sim/experiments.hpp"
#include "core/atomic_file.hpp"
#include "report/experiment_report.hpp"

namespace ctwin {
namespace {

//! A progress line on stderr, only when it is a terminal.
Progress progress_bar(const char* what) {
  if (!::isatty(2) || !Ranks::world().is_root()) return {};
  return [what](std::size_t done, std::size_t total) {
    std::fprintf(stderr, "\r  %s: %zu/%zu", what, done, total);
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

//! "/ptr=a,b,c" -> the pointer and its values.
bool parse_set(const std::string& text, std::string& pointer, std::vector<nlohmann::json>& values) {
  const auto eq = text.find('=');
  if (text.empty() || text[0] != '/' || eq == std::string::npos || eq + 1 >= text.size()) return false;
  pointer = text.substr(0, eq);
  std::stringstream rest(text.substr(eq + 1));
  for (std::string item; std::getline(rest, item, ',');) values.push_back(parse_setting_value(item));
  return !values.empty();
}

//! Prints the table; rank 0 writes the files the options ask for (every rank holds the same results).
int show_and_write(const ExperimentReport& report, const ExperimentCommands::Common& common) {
  std::cout << report.text;
  if (!Ranks::world().is_root()) return 0;
  try {
    for (const auto& [path, content] : {std::pair{common.json, &report.json}, {common.csv, &report.csv}, {common.svg, &report.svg}})
      if (!path.empty()) write_file_atomically(path, *content);
  } catch (const std::exception& e) {
    std::cerr << "ctwin: " << e.what() << "\n";
    return cli::kExitFailure;
  }
  return 0;
}

}  // namespace

ExperimentCommands::ExperimentCommands(CLI::App& app) {
  sweep_cmd_ = app.add_subcommand("sweep", "goodput over one or two scenario fields, on common random numbers");
  add_common(sweep_cmd_, sweep_);
  sweep_cmd_->add_option("--set", sets_, "JSON pointer and values: /policies/checkpoint/interval=10min,20min,40min (once or twice)")
      ->required();

  optimize_cmd_ = app.add_subcommand("optimize", "the checkpoint interval that maximizes simulated goodput, with its CI");
  add_common(optimize_cmd_, optimize_);
  optimize_cmd_->add_option("--from", from_, "smallest interval tried (default: a wide bracket)");
  optimize_cmd_->add_option("--to", to_, "largest interval tried");
  optimize_cmd_->add_option("--points", points_, "grid points, log-spaced")->check(CLI::Range(5, 200));
  optimize_cmd_->add_option("--ci-target", ci_target_, "double the trials until the best point's goodput CI half-width is below this");
  optimize_cmd_->add_option("--choose", choices_,
                            "instead of the interval: the best combination of /pointer=a,b,c choices (repeat for more fields)");
  optimize_cmd_->add_option("--max-trials", max_trials_, "stop doubling at this many trials per point")->check(CLI::Range(2, kMaxTrials));

  compare_cmd_ = app.add_subcommand("compare", "variants of a scenario side by side, paired on the same fault timelines");
  add_common(compare_cmd_, compare_);
  compare_cmd_->add_option("--variant", variants_, "NAME:/pointer=value[;/pointer=value...] (the scenario as it is is the baseline)")
      ->required();
}

void ExperimentCommands::add_common(CLI::App* command, Common& common) {
  common.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  command->add_option("scenario", common.scenario, "scenario file")->required();
  command->add_option("--trials", common.trials, "trials per point (the same seeds at every point)")->check(CLI::Range(2, kMaxTrials));
  command->add_option("--seed", common.seed, "run seed");
  command->add_option("--jobs", common.jobs, "parallel workers")->check(CLI::Range(1, 4096));
  command->add_option("--json", common.json, "write the results as JSON");
  command->add_option("--csv", common.csv, "write the results as CSV");
  command->add_option("--svg", common.svg, "write a plot of goodput (SVG)");
  command->add_option("--rate-uncertainty", common.rate_uncertainty,
                      "on (default): each trial draws the rates from their uncertainty (the same draws for every variant); off: rates held exact")
      ->check(CLI::IsMember({"on", "off"}));
}

std::optional<int> ExperimentCommands::dispatch() {
  const Common* chosen = *sweep_cmd_ ? &sweep_ : *optimize_cmd_ ? &optimize_ : *compare_cmd_ ? &compare_ : nullptr;
  if (!chosen) return std::nullopt;
  bool ok = true;
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{"--json", chosen->json}, {"--csv", chosen->csv}, {"--svg", chosen->svg}})
    ok &= cli::check_output_path(flag, path);
  if (!ok) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] {
    if (*sweep_cmd_) return sweep();
    if (*optimize_cmd_) return optimize();
    return compare();
  });
}

int ExperimentCommands::sweep() {
  std::vector<std::pair<std::string, std::vector<nlohmann::json>>> axes;
  for (const auto& text : sets_) {
    std::string pointer;
    std::vector<nlohmann::json> values;
    if (!parse_set(text, pointer, values)) {
      std::cerr << "ctwin: --set " << text << ": expected /json/pointer=value[,value...]\n";
      return cli::kExitBadInput;
    }
    axes.emplace_back(pointer, values);
  }
  if (axes.size() > 2) {
    std::cerr << "ctwin: --set: a sweep takes one or two fields\n";
    return cli::kExitBadInput;
  }
  std::vector<std::vector<Setting>> variants;
  for (const auto& a : axes[0].second) {
    if (axes.size() == 1) variants.push_back({{axes[0].first, a}});
    else
      for (const auto& b : axes[1].second) variants.push_back({{axes[0].first, a}, {axes[1].first, b}});
  }
  const auto document = read_scenario_document(sweep_.scenario);
  const RunOptions options = sweep_.run_options();
  const auto results = run_variants(document, sweep_.scenario, variants, options, progress_bar("sweep"));

  std::vector<SweepAxis> sweep_axes;
  for (auto& [pointer, values] : axes) sweep_axes.push_back({pointer, values});
  return show_and_write(sweep_report({sweep_.scenario, sweep_.trials, sweep_.seed, {}}, sweep_axes, results), sweep_);
}

int ExperimentCommands::optimize() {
  if (!choices_.empty()) return optimize_combination();
  OptimizeOptions options;
  std::string why;
  if (!from_.empty()) {
    auto v = parse_duration_s(from_, why);
    if (!v) return std::cerr << "ctwin: --from " << from_ << ": " << why << "\n", cli::kExitBadInput;
    options.from_s = *v;
  }
  if (!to_.empty()) {
    auto v = parse_duration_s(to_, why);
    if (!v) return std::cerr << "ctwin: --to " << to_ << ": " << why << "\n", cli::kExitBadInput;
    options.to_s = *v;
  }
  options.points = points_;
  options.trials = optimize_.trials;
  options.seed = optimize_.seed;
  options.jobs = optimize_.jobs;
  options.rate_uncertainty = optimize_.rate_uncertainty == "on";
  options.ci_target = ci_target_;
  options.max_trials = max_trials_;
  const auto document = read_scenario_document(optimize_.scenario);
  const OptimizeResult r = optimize_interval(document, optimize_.scenario, options, progress_bar("optimize"));
  // The scenario's own interval, when it states one, is marked beside the optimum.
  std::optional<double> current_s;
  const auto policy = document.value("/policies/checkpoint"_json_pointer, nlohmann::json::object());
  if (policy.value("type", "") == "fixed" && policy.contains("interval") && policy["interval"].is_string())
    if (auto s = parse_duration_s(policy["interval"].get<std::string>(), why)) current_s = *s;
  return show_and_write(optimize_report({optimize_.scenario, optimize_.trials, optimize_.seed, current_s}, r), optimize_);
}

//! optimize --choose: every combination of the choices, the best with its paired margin.
int ExperimentCommands::optimize_combination() {
  std::vector<std::vector<Setting>> combinations{{}};
  for (const auto& text : choices_) {
    std::string pointer;
    std::vector<nlohmann::json> values;
    if (!parse_set(text, pointer, values)) {
      std::cerr << "ctwin: --choose " << text << ": expected /json/pointer=value[,value...]\n";
      return cli::kExitBadInput;
    }
    std::vector<std::vector<Setting>> grown;
    for (const auto& c : combinations)
      for (const auto& v : values) {
        grown.push_back(c);
        grown.back().push_back({pointer, v});
      }
    combinations = std::move(grown);
  }
  OptimizeOptions options;
  options.trials = optimize_.trials;
  options.max_trials = std::max(max_trials_, optimize_.trials);
  options.seed = optimize_.seed;
  options.jobs = optimize_.jobs;
  options.rate_uncertainty = optimize_.rate_uncertainty == "on";
  const auto document = read_scenario_document(optimize_.scenario);
  const ChoiceResult r = choose_policy(document, optimize_.scenario, combinations, options, progress_bar("optimize"));

  return show_and_write(choice_report({optimize_.scenario, optimize_.trials, optimize_.seed, {}}, choices_, combinations.size(), r),
                        optimize_);
}

int ExperimentCommands::compare() {
  std::vector<std::string> names{"baseline"};
  std::vector<std::vector<Setting>> variants{{}};
  for (const auto& text : variants_) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0) {
      std::cerr << "ctwin: --variant " << text << ": expected NAME:/pointer=value[;/pointer=value...]\n";
      return cli::kExitBadInput;
    }
    std::vector<Setting> settings;
    std::stringstream rest(text.substr(colon + 1));
    for (std::string item; std::getline(rest, item, ';');) {
      const auto eq = item.find('=');
      if (item.empty() || item[0] != '/' || eq == std::string::npos) {
        std::cerr << "ctwin: --variant " << text << ": expected /pointer=value, got \"" << item << "\"\n";
        return cli::kExitBadInput;
      }
      settings.push_back({item.substr(0, eq), parse_setting_value(item.substr(eq + 1))});
    }
    names.push_back(text.substr(0, colon));
    variants.push_back(settings);
  }
  const auto document = read_scenario_document(compare_.scenario);
  const RunOptions options = compare_.run_options();
  const auto results = run_variants(document, compare_.scenario, variants, options, progress_bar("compare"));
  return show_and_write(compare_report({compare_.scenario, compare_.trials, compare_.seed, {}}, names, results), compare_);
}

}  // namespace ctwin
