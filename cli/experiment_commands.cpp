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
#include "sim/report/report.hpp"
#include "sim/report/svg_plot.hpp"

namespace ctwin {
namespace {

using ordered_json = nlohmann::ordered_json;

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

//! A number for the plot's x axis: durations in seconds, numbers as they are.
std::optional<double> numeric(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    std::string why;
    if (auto s = parse_duration_s(v.get<std::string>(), why)) return *s;
  }
  return std::nullopt;
}

std::string value_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

int write_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  if (!Ranks::world().is_root()) return 0;  // every rank holds the same results: rank 0 writes them
  try {
    for (const auto& [path, content] : outputs)
      if (!path.empty()) write_file_atomically(path, content);
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
  optimize_cmd_->add_option("--max-trials", max_trials_, "stop doubling at this many trials per point")->check(CLI::Range(2, 10000000));

  compare_cmd_ = app.add_subcommand("compare", "variants of a scenario side by side, paired on the same fault timelines");
  add_common(compare_cmd_, compare_);
  compare_cmd_->add_option("--variant", variants_, "NAME:/pointer=value[;/pointer=value...] (the scenario as it is is the baseline)")
      ->required();
}

void ExperimentCommands::add_common(CLI::App* command, Common& common) {
  common.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  command->add_option("scenario", common.scenario, "scenario file")->required();
  command->add_option("--trials", common.trials, "trials per point (the same seeds at every point)")->check(CLI::Range(2, 10000000));
  command->add_option("--seed", common.seed, "run seed");
  command->add_option("--jobs", common.jobs, "parallel workers")->check(CLI::Range(1, 4096));
  command->add_option("--json", common.json, "write the results as JSON");
  command->add_option("--csv", common.csv, "write the results as CSV");
  command->add_option("--svg", common.svg, "write a plot of goodput (SVG)");
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

  std::ostringstream table, csv;
  ordered_json points = ordered_json::array();
  for (const auto& a : axes) {
    table << "  " << a.first << "  ";
    csv << a.first << ',';
  }
  table << "  goodput   95% CI               p5       p95\n";
  csv << "goodput_mean,ci95_low,ci95_high,p5,p50,p95\n";
  for (const auto& r : results) {
    ordered_json settings;
    for (const auto& s : r.settings) {
      char cell[64];
      std::snprintf(cell, sizeof cell, "  %*s  ", static_cast<int>(s.pointer.size()), value_text(s.value).c_str());
      table << cell;
      csv << value_text(s.value) << ',';
      settings[s.pointer] = s.value;
    }
    char line[160];
    std::snprintf(line, sizeof line, "  %.5f  [%.5f, %.5f]  %.5f  %.5f\n", r.summary.mean, r.summary.ci95_low,
                  r.summary.ci95_high, r.summary.p5, r.summary.p95);
    table << line;
    csv << r.summary.mean << ',' << r.summary.ci95_low << ',' << r.summary.ci95_high << ',' << r.summary.p5 << ','
        << r.summary.p50 << ',' << r.summary.p95 << '\n';
    points.push_back({{"settings", settings}, {"goodput", summary_json(r.summary)}});
  }
  const auto best = std::max_element(results.begin(), results.end(),
                                     [](const auto& x, const auto& y) { return x.summary.mean < y.summary.mean; });
  Plot plot;
  plot.title = "ctwin sweep: goodput over " + axes[0].first;
  plot.x_label = axes[0].first + (numeric(axes[0].second[0]) && axes[0].second[0].is_string() ? " (s)" : "");
  plot.y_label = "goodput (mean, 95% CI)";
  const std::size_t per_series = axes.size() == 1 ? 1 : axes[1].second.size();
  for (std::size_t k = 0; k < per_series; ++k) {
    PlotSeries series;
    if (axes.size() == 2) series.label = axes[1].first + " = " + value_text(axes[1].second[k]);
    for (std::size_t i = 0; i < axes[0].second.size(); ++i) {
      const auto& r = results[i * per_series + k];
      series.x.push_back(numeric(axes[0].second[i]).value_or(static_cast<double>(i)));
      series.y.push_back(r.summary.mean);
      series.y_low.push_back(r.summary.ci95_low);
      series.y_high.push_back(r.summary.ci95_high);
    }
    plot.series.push_back(std::move(series));
  }
  plot.marker_x = numeric(best->settings[0].value);
  plot.marker_label = "best: " + value_text(best->settings[0].value);
  std::cout << "ctwin sweep: " << sweep_.scenario << "  (" << sweep_.trials << " trials per point, seed " << sweep_.seed
            << ", the same seeds at every point)\n\n"
            << table.str() << "\n  best: ";
  for (const auto& s : best->settings) std::cout << s.pointer << " = " << value_text(s.value) << "  ";
  std::cout << "(goodput " << best->summary.mean << ")\n";
  ordered_json j{{"schema_version", 1}, {"command", "sweep"}, {"seed", sweep_.seed}, {"trials", sweep_.trials}, {"points", points}};
  return write_outputs({{sweep_.json, j.dump(2) + "\n"}, {sweep_.csv, csv.str()}, {sweep_.svg, plot_svg(plot)}});
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
  options.ci_target = ci_target_;
  options.max_trials = max_trials_;
  const auto document = read_scenario_document(optimize_.scenario);
  const OptimizeResult r = optimize_interval(document, optimize_.scenario, options, progress_bar("optimize"));

  std::ostringstream csv;
  csv << "interval_s,goodput_mean,ci95_low,ci95_high,p5,p50,p95\n";
  ordered_json grid = ordered_json::array();
  PlotSeries series;
  std::cout << "ctwin optimize: " << optimize_.scenario << "  (" << r.trials << " trials per point, seed " << optimize_.seed
            << ", the same seeds at every point)\n\n  interval        goodput   95% CI\n";
  for (std::size_t i = 0; i < r.interval_s.size(); ++i) {
    const Summary& g = r.goodput[i];
    char line[160];
    std::snprintf(line, sizeof line, "  %-12s  %.5f  [%.5f, %.5f]\n", format_duration(r.interval_s[i]).c_str(), g.mean,
                  g.ci95_low, g.ci95_high);
    std::cout << line;
    csv << r.interval_s[i] << ',' << g.mean << ',' << g.ci95_low << ',' << g.ci95_high << ',' << g.p5 << ',' << g.p50
        << ',' << g.p95 << '\n';
    grid.push_back({{"interval_s", r.interval_s[i]}, {"goodput", summary_json(g)}});
    series.x.push_back(r.interval_s[i]);
    series.y.push_back(g.mean);
    series.y_low.push_back(g.ci95_low);
    series.y_high.push_back(g.ci95_high);
  }
  std::cout << "\n  best interval  " << format_duration(r.best_interval_s) << "   95% CI [" << format_duration(r.best_ci_low_s)
            << ", " << format_duration(r.best_ci_high_s) << "]   ("
            << (r.fitted ? "peak of a quadratic fit in log interval" : "best grid point: the fit was not a peak") << ")\n"
            << "  goodput there  " << r.best_goodput.mean << "   95% CI [" << r.best_goodput.ci95_low << ", "
            << r.best_goodput.ci95_high << "]\n";
  Plot plot;
  plot.title = "ctwin optimize: goodput over the checkpoint interval";
  plot.x_label = "checkpoint interval (s)";
  plot.y_label = "goodput (mean, 95% CI)";
  plot.log_x = true;
  plot.series.push_back(std::move(series));
  plot.marker_x = r.best_interval_s;
  plot.marker_label = "optimum " + format_duration(r.best_interval_s);
  ordered_json j{{"schema_version", 1},
                 {"command", "optimize"},
                 {"seed", optimize_.seed},
                 {"trials", r.trials},
                 {"grid", grid},
                 {"best", {{"interval_s", r.best_interval_s},
                           {"ci95_low_s", r.best_ci_low_s},
                           {"ci95_high_s", r.best_ci_high_s},
                           {"fitted", r.fitted},
                           {"goodput", summary_json(r.best_goodput)}}}};
  return write_outputs({{optimize_.json, j.dump(2) + "\n"}, {optimize_.csv, csv.str()}, {optimize_.svg, plot_svg(plot)}});
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
  const auto document = read_scenario_document(optimize_.scenario);
  const ChoiceResult r = choose_policy(document, optimize_.scenario, combinations, options, progress_bar("optimize"));

  auto label = [](const VariantResult& v) {
    std::string text;
    for (const auto& s : v.settings) text += (text.empty() ? "" : "  ") + s.pointer + "=" + value_text(s.value);
    return text;
  };
  std::cout << "ctwin optimize: " << optimize_.scenario << "  (" << combinations.size() << " combinations, " << r.trials
            << " trials each, seed " << optimize_.seed << ", the same seeds for all)\n\n";
  std::ostringstream csv;
  for (const auto& text : choices_) csv << text.substr(0, text.find('=')) << ',';
  csv << "goodput_mean,ci95_low,ci95_high,diff_vs_best_mean,diff_ci95_low,diff_ci95_high\n";
  ordered_json rows = ordered_json::array();
  PlotSeries series;
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const VariantResult& v = r.variants[i];
    const PairedDifference d = paired_difference(v.goodput, r.variants[r.best].goodput);
    char line[160];
    std::snprintf(line, sizeof line, "  %.5f  [%.5f, %.5f]  vs best %+.5f [%+.5f, %+.5f]%s  ", v.summary.mean,
                  v.summary.ci95_low, v.summary.ci95_high, d.paired.mean, d.paired.ci95_low, d.paired.ci95_high,
                  i == r.best ? " *" : "  ");
    std::cout << line << label(v) << "\n";
    ordered_json settings = ordered_json::object();
    for (const auto& s : v.settings) {
      settings[s.pointer] = s.value;
      csv << value_text(s.value) << ',';
    }
    csv << v.summary.mean << ',' << v.summary.ci95_low << ',' << v.summary.ci95_high << ',' << d.paired.mean << ','
        << d.paired.ci95_low << ',' << d.paired.ci95_high << '\n';
    rows.push_back({{"settings", settings}, {"goodput", summary_json(v.summary)}, {"vs_best", summary_json(d.paired)}});
    series.x.push_back(static_cast<double>(i));
    series.y.push_back(v.summary.mean);
    series.y_low.push_back(v.summary.ci95_low);
    series.y_high.push_back(v.summary.ci95_high);
  }
  std::cout << "\n  best         " << label(r.variants[r.best]) << "\n  goodput      " << r.variants[r.best].summary.mean
            << "   95% CI [" << r.variants[r.best].summary.ci95_low << ", " << r.variants[r.best].summary.ci95_high << "]\n"
            << "  over next    " << r.margin.paired.mean << "   paired 95% CI [" << r.margin.paired.ci95_low << ", "
            << r.margin.paired.ci95_high << "]  ("
            << (r.separated ? "separated" : "not separated at --max-trials: the top two are within noise") << ")\n";
  Plot plot;
  plot.title = "ctwin optimize: goodput by combination";
  plot.x_label = "combination (in the order of the table)";
  plot.y_label = "goodput (mean, 95% CI)";
  plot.series.push_back(std::move(series));
  plot.marker_x = static_cast<double>(r.best);
  plot.marker_label = "best";
  ordered_json j{{"schema_version", 1},
                 {"command", "optimize"},
                 {"seed", optimize_.seed},
                 {"trials", r.trials},
                 {"combinations", rows},
                 {"best", {{"index", r.best}, {"separated", r.separated}, {"over_runner_up", summary_json(r.margin.paired)}}}};
  return write_outputs({{optimize_.json, j.dump(2) + "\n"}, {optimize_.csv, csv.str()}, {optimize_.svg, plot_svg(plot)}});
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
  std::cout << "ctwin compare: " << compare_.scenario << "  (" << compare_.trials << " trials each, seed " << compare_.seed
            << ": every variant sees the same fault timelines)\n\n"
            << "  variant              goodput   95% CI                 vs baseline (paired 95% CI)        unpaired CI width\n";
  std::ostringstream csv;
  csv << "variant,goodput_mean,ci95_low,ci95_high,diff_mean,diff_ci95_low,diff_ci95_high\n";
  ordered_json out = ordered_json::array();
  PlotSeries series;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const PairedDifference d = paired_difference(r.goodput, results[0].goodput);
    char line[240];
    std::snprintf(line, sizeof line, "  %-18s  %.5f  [%.5f, %.5f]   %+.5f [%+.5f, %+.5f]      %.5f\n", names[i].c_str(),
                  r.summary.mean, r.summary.ci95_low, r.summary.ci95_high, d.paired.mean, d.paired.ci95_low,
                  d.paired.ci95_high, d.unpaired.ci95_high - d.unpaired.ci95_low);
    std::cout << line;
    csv << names[i] << ',' << r.summary.mean << ',' << r.summary.ci95_low << ',' << r.summary.ci95_high << ','
        << d.paired.mean << ',' << d.paired.ci95_low << ',' << d.paired.ci95_high << '\n';
    ordered_json settings = ordered_json::object();
    for (const auto& s : r.settings) settings[s.pointer] = s.value;
    out.push_back({{"name", names[i]},
                   {"settings", settings},
                   {"goodput", summary_json(r.summary)},
                   {"vs_baseline", {{"paired", summary_json(d.paired)}, {"unpaired", summary_json(d.unpaired)}}}});
    series.x.push_back(static_cast<double>(i));
    series.y.push_back(r.summary.mean);
    series.y_low.push_back(r.summary.ci95_low);
    series.y_high.push_back(r.summary.ci95_high);
  }
  Plot plot;
  plot.title = "ctwin compare: goodput by variant (0 = baseline)";
  plot.x_label = "variant";
  plot.y_label = "goodput (mean, 95% CI)";
  plot.series.push_back(std::move(series));
  ordered_json j{{"schema_version", 1}, {"command", "compare"}, {"seed", compare_.seed}, {"trials", compare_.trials}, {"variants", out}};
  return write_outputs({{compare_.json, j.dump(2) + "\n"}, {compare_.csv, csv.str()}, {compare_.svg, plot_svg(plot)}});
}

}  // namespace ctwin
