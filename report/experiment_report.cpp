#include "report/experiment_report.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <sstream>

#include "core/version.hpp"
#include "core/units.hpp"
#include "report/run_report.hpp"
#include "report/svg_plot.hpp"

namespace ctwin {

namespace {

//! "5.42 min   95% CI [5.38, 5.47] min": one unit (the interval's), and as many decimals as it
//! takes for the bounds to differ from the interval, so a narrow CI is not printed as a point.
std::string interval_with_ci(double best_s, double low_s, double high_s) {
  const std::string best = format_duration(best_s);
  const std::string unit = best.substr(best.find(' ') + 1);
  const double scale = unit == "s" ? 1 : unit == "min" ? 60 : unit == "h" ? 3600 : 86400;
  char text[160];
  for (int decimals = 1;; ++decimals) {
    auto show = [&](double seconds) {
      char v[32];
      std::snprintf(v, sizeof v, "%.*f", decimals, seconds / scale);
      return std::string(v);
    };
    const std::string b = show(best_s), lo = show(low_s), hi = show(high_s);
    if ((lo != b && hi != b) || decimals == 4 || low_s == high_s) {
      std::snprintf(text, sizeof text, "%s %s   95%% CI [%s, %s] %s", b.c_str(), unit.c_str(), lo.c_str(), hi.c_str(), unit.c_str());
      return text;
    }
  }
}

using ordered_json = nlohmann::ordered_json;

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

//! A field by JSON pointer as a person reads it: its last two named parts in words, the pointer
//! after them ("checkpoint interval (/policies/checkpoint/interval)").
std::string field_words(const std::string& pointer) {
  std::vector<std::string> parts;
  for (std::size_t at = 1; at <= pointer.size();) {
    const std::size_t end = std::min(pointer.find('/', at), pointer.size());
    std::string part = pointer.substr(at, end - at);
    const bool index = !part.empty() && std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); });
    if (!part.empty() && !index && part != "policies") {
      std::replace(part.begin(), part.end(), '_', ' ');
      parts.push_back(part);
    }
    at = end + 1;
  }
  std::string words;
  for (std::size_t i = parts.size() > 2 ? parts.size() - 2 : 0; i < parts.size(); ++i) words += (words.empty() ? "" : " ") + parts[i];
  return words.empty() ? pointer : words + " (" + pointer + ")";
}

//! The answer above the goodputs it comes from: each point's goodput less the baseline's, trial by
//! trial (in points, its paired 95% CI), on the goodput plot's x axis, a level at zero for the
//! baseline. The goodput panel below keeps its unpaired intervals, which overlap when trials vary
//! more than the points do.
std::string paired_svg(Plot goodput, const std::vector<Summary>& paired, const std::string& title, const std::string& baseline) {
  Plot difference;
  difference.title = title;
  difference.x_label = goodput.x_label;
  difference.y_label = "less " + baseline + " (points, paired 95% CI)";
  difference.log_x = goodput.log_x;
  difference.x_durations = goodput.x_durations;
  difference.x_labels = goodput.x_labels;
  difference.markers = goodput.markers;
  difference.levels.push_back({0, baseline});
  PlotSeries series;
  series.line = goodput.series.front().line;
  series.x = goodput.series.front().x;
  for (const Summary& d : paired) {
    series.y.push_back(100 * d.mean);
    series.y_low.push_back(100 * d.ci95_low);
    series.y_high.push_back(100 * d.ci95_high);
  }
  difference.series.push_back(std::move(series));
  goodput.y_label = "goodput (mean, unpaired 95% CI)";
  goodput.title += " (each interval alone)";
  return plot_svg_stack({difference, goodput});
}

}  // namespace

ExperimentReport sweep_report(const ExperimentSource& source, const std::vector<SweepAxis>& axes,
                              const std::vector<VariantResult>& results) {
  std::ostringstream out;
  std::ostringstream table, csv;
  ordered_json points = ordered_json::array();
  for (const auto& a : axes) {
    table << "  " << a.pointer << "  ";
    csv << a.pointer << ',';
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
  plot.title = "ctwin sweep: goodput over " + field_words(axes[0].pointer);
  plot.x_label = field_words(axes[0].pointer);
  plot.y_label = "goodput (mean, 95% CI)";
  // A duration axis is labelled in durations; values that are not all numbers are categories.
  const bool numeric_axis = std::all_of(axes[0].values.begin(), axes[0].values.end(), [](const auto& v) { return numeric(v).has_value(); });
  plot.x_durations = numeric_axis && axes[0].values[0].is_string();
  if (!numeric_axis)
    for (const auto& v : axes[0].values) plot.x_labels.push_back(value_text(v));
  const std::size_t per_series = axes.size() == 1 ? 1 : axes[1].values.size();
  for (std::size_t k = 0; k < per_series; ++k) {
    PlotSeries series;
    series.line = numeric_axis;
    if (axes.size() == 2) series.label = field_words(axes[1].pointer) + " = " + value_text(axes[1].values[k]);
    for (std::size_t i = 0; i < axes[0].values.size(); ++i) {
      const auto& r = results[i * per_series + k];
      series.x.push_back(numeric_axis ? *numeric(axes[0].values[i]) : static_cast<double>(i));
      series.y.push_back(r.summary.mean);
      series.y_low.push_back(r.summary.ci95_low);
      series.y_high.push_back(r.summary.ci95_high);
    }
    plot.series.push_back(std::move(series));
  }
  if (numeric_axis) plot.markers.push_back({*numeric(best->settings[0].value), "best: " + value_text(best->settings[0].value), true, {}});
  out << "ctwin sweep: " << source.scenario_path << "  (" << source.trials << " trials per point, seed " << source.seed
            << ", the same seeds at every point)\n\n"
            << table.str() << "\n  best: ";
  for (const auto& s : best->settings) out << s.pointer << " = " << value_text(s.value) << "  ";
  out << "(goodput " << best->summary.mean << ")\n";
  ordered_json j{{"schema_version", 1}, {"ctwin_version", kCtwinVersion}, {"command", "sweep"}, {"seed", source.seed}, {"trials", source.trials}, {"points", points}};
  return {out.str(), j.dump(2) + "\n", csv.str(), plot_svg(plot)};
}

ExperimentReport optimize_report(const ExperimentSource& source, const OptimizeResult& r) {
  std::ostringstream out;
  std::ostringstream csv;
  csv << "interval_s,goodput_mean,ci95_low,ci95_high,p5,p50,p95,diff_mean,diff_ci95_low,diff_ci95_high\n";
  ordered_json grid = ordered_json::array();
  PlotSeries series;
  out << "ctwin optimize: " << source.scenario_path << "  (" << r.trials << " trials per point, seed " << source.seed
            << ", the same seeds at every point)\n\n  interval        goodput   95% CI                 vs the scenario's own (paired 95% CI)\n";
  for (std::size_t i = 0; i < r.interval_s.size(); ++i) {
    const Summary& g = r.goodput[i];
    const Summary& d = r.vs_given[i];
    char line[200];
    std::snprintf(line, sizeof line, "  %-12s  %.5f  [%.5f, %.5f]   %+.5f [%+.5f, %+.5f]\n", format_duration(r.interval_s[i]).c_str(), g.mean,
                  g.ci95_low, g.ci95_high, d.mean, d.ci95_low, d.ci95_high);
    out << line;
    csv << r.interval_s[i] << ',' << g.mean << ',' << g.ci95_low << ',' << g.ci95_high << ',' << g.p5 << ',' << g.p50
        << ',' << g.p95 << ',' << d.mean << ',' << d.ci95_low << ',' << d.ci95_high << '\n';
    grid.push_back({{"interval_s", r.interval_s[i]}, {"goodput", summary_json(g)}, {"vs_given", summary_json(d)}});
    series.x.push_back(r.interval_s[i]);
    series.y.push_back(g.mean);
    series.y_low.push_back(g.ci95_low);
    series.y_high.push_back(g.ci95_high);
  }
  out << "\n  best interval  " << interval_with_ci(r.best_interval_s, r.best_ci_low_s, r.best_ci_high_s) << "   ("
            << (r.fitted ? "peak of a quadratic fit in log interval" : "best grid point: the fit was not a peak") << ")\n"
            << "  goodput there  " << r.best_goodput.mean << "   95% CI [" << r.best_goodput.ci95_low << ", "
            << r.best_goodput.ci95_high << "]\n"
            << "  over the scenario's own  " << r.best_vs_given.mean << "   paired 95% CI [" << r.best_vs_given.ci95_low << ", "
            << r.best_vs_given.ci95_high << "]   (its goodput " << r.given.mean << ")\n";
  Plot plot;
  plot.title = "ctwin optimize: goodput over the checkpoint interval";
  plot.x_label = "checkpoint interval";
  plot.y_label = "goodput (mean, 95% CI)";
  plot.log_x = true;
  plot.x_durations = true;
  plot.series.push_back(std::move(series));
  plot.markers.push_back({r.best_interval_s, "optimum " + interval_with_ci(r.best_interval_s, r.best_ci_low_s, r.best_ci_high_s), true,
                          std::make_pair(r.best_ci_low_s, r.best_ci_high_s)});
  if (source.current_interval_s) plot.markers.push_back({*source.current_interval_s, "current " + format_duration(*source.current_interval_s), false, {}});
  ordered_json j{{"schema_version", 1},
                 {"ctwin_version", kCtwinVersion},
                 {"command", "optimize"},
                 {"seed", source.seed},
                 {"trials", r.trials},
                 {"given", {{"goodput", summary_json(r.given)}}},
                 {"grid", grid},
                 {"best", {{"interval_s", r.best_interval_s},
                           {"ci95_low_s", r.best_ci_low_s},
                           {"ci95_high_s", r.best_ci_high_s},
                           {"fitted", r.fitted},
                           {"goodput", summary_json(r.best_goodput)},
                           {"vs_given", summary_json(r.best_vs_given)}}}};
  return {out.str(), j.dump(2) + "\n", csv.str(),
          paired_svg(plot, r.vs_given, "ctwin optimize: goodput less the scenario's own, paired trial by trial", "the scenario's own")};
}

ExperimentReport choice_report(const ExperimentSource& source, const std::vector<std::string>& choices,
                               std::size_t combinations, const ChoiceResult& r) {
  std::ostringstream out;
  auto label = [](const VariantResult& v) {
    std::string text;
    for (const auto& s : v.settings) text += (text.empty() ? "" : "  ") + s.pointer + "=" + value_text(s.value);
    return text;
  };
  out << "ctwin optimize: " << source.scenario_path << "  (" << combinations << " combinations, " << r.trials
            << " trials each, seed " << source.seed << ", the same seeds for all)\n\n";
  std::ostringstream csv;
  for (const auto& text : choices) csv << text.substr(0, text.find('=')) << ',';
  csv << "goodput_mean,ci95_low,ci95_high,diff_vs_best_mean,diff_ci95_low,diff_ci95_high\n";
  ordered_json rows = ordered_json::array();
  PlotSeries series;
  std::vector<Summary> vs_best;
  for (std::size_t i = 0; i < r.variants.size(); ++i) {
    const VariantResult& v = r.variants[i];
    const PairedDifference d = paired_difference(v.goodput, r.variants[r.best].goodput);
    vs_best.push_back(d.paired);
    char line[160];
    std::snprintf(line, sizeof line, "  %.5f  [%.5f, %.5f]  vs best %+.5f [%+.5f, %+.5f]%s  ", v.summary.mean,
                  v.summary.ci95_low, v.summary.ci95_high, d.paired.mean, d.paired.ci95_low, d.paired.ci95_high,
                  i == r.best ? " *" : "  ");
    out << line << label(v) << "\n";
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
  out << "\n  best         " << label(r.variants[r.best]) << "\n  goodput      " << r.variants[r.best].summary.mean
            << "   95% CI [" << r.variants[r.best].summary.ci95_low << ", " << r.variants[r.best].summary.ci95_high << "]\n"
            << "  over next    " << r.margin.paired.mean << "   paired 95% CI [" << r.margin.paired.ci95_low << ", "
            << r.margin.paired.ci95_high << "]  ("
            << (r.separated ? "separated" : "not separated at --max-trials: the top two are within noise") << ")\n";
  Plot plot;
  plot.title = "ctwin optimize: goodput by combination";
  plot.y_label = "goodput (mean, 95% CI)";
  for (const auto& s : r.variants.front().settings) plot.x_label += (plot.x_label.empty() ? "" : ", ") + s.pointer;
  for (const auto& v : r.variants) {
    std::string values;
    for (const auto& s : v.settings) values += (values.empty() ? "" : ", ") + value_text(s.value);
    plot.x_labels.push_back(values);
  }
  series.line = false;
  plot.series.push_back(std::move(series));
  plot.markers.push_back({static_cast<double>(r.best), "best: " + plot.x_labels[r.best], true, {}});
  ordered_json j{{"schema_version", 1},
                 {"ctwin_version", kCtwinVersion},
                 {"command", "optimize"},
                 {"seed", source.seed},
                 {"trials", r.trials},
                 {"combinations", rows},
                 {"best", {{"index", r.best}, {"separated", r.separated}, {"over_runner_up", summary_json(r.margin.paired)}}}};
  return {out.str(), j.dump(2) + "\n", csv.str(),
          paired_svg(plot, vs_best, "ctwin optimize: goodput less the best combination's, paired trial by trial", "the best")};
}

ExperimentReport compare_report(const ExperimentSource& source, const std::vector<std::string>& names,
                                const std::vector<VariantResult>& results) {
  std::ostringstream out;
  out << "ctwin compare: " << source.scenario_path << "  (" << source.trials << " trials each, seed " << source.seed
            << ": every variant sees the same fault timelines)\n\n"
            << "  variant              goodput   95% CI                 vs baseline (paired 95% CI)        unpaired CI width\n";
  std::ostringstream csv;
  csv << "variant,goodput_mean,ci95_low,ci95_high,diff_mean,diff_ci95_low,diff_ci95_high\n";
  ordered_json variants = ordered_json::array();
  PlotSeries series;
  std::vector<Summary> vs_baseline;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const PairedDifference d = paired_difference(r.goodput, results[0].goodput);
    vs_baseline.push_back(d.paired);
    char line[240];
    std::snprintf(line, sizeof line, "  %-18s  %.5f  [%.5f, %.5f]   %+.5f [%+.5f, %+.5f]      %.5f\n", names[i].c_str(),
                  r.summary.mean, r.summary.ci95_low, r.summary.ci95_high, d.paired.mean, d.paired.ci95_low,
                  d.paired.ci95_high, d.unpaired.ci95_high - d.unpaired.ci95_low);
    out << line;
    csv << names[i] << ',' << r.summary.mean << ',' << r.summary.ci95_low << ',' << r.summary.ci95_high << ','
        << d.paired.mean << ',' << d.paired.ci95_low << ',' << d.paired.ci95_high << '\n';
    ordered_json settings = ordered_json::object();
    for (const auto& s : r.settings) settings[s.pointer] = s.value;
    variants.push_back({{"name", names[i]},
                   {"settings", settings},
                   {"goodput", summary_json(r.summary)},
                   {"vs_baseline", {{"paired", summary_json(d.paired)}, {"unpaired", summary_json(d.unpaired)}}}});
    series.x.push_back(static_cast<double>(i));
    series.y.push_back(r.summary.mean);
    series.y_low.push_back(r.summary.ci95_low);
    series.y_high.push_back(r.summary.ci95_high);
  }
  Plot plot;
  plot.title = "ctwin compare: goodput by variant";
  plot.x_label = "variant (the first is the baseline)";
  plot.y_label = "goodput (mean, 95% CI)";
  plot.x_labels = names;
  series.line = false;
  plot.series.push_back(std::move(series));
  ordered_json j{{"schema_version", 1}, {"ctwin_version", kCtwinVersion}, {"command", "compare"}, {"seed", source.seed}, {"trials", source.trials}, {"variants", variants}};
  return {out.str(), j.dump(2) + "\n", csv.str(),
          paired_svg(plot, vs_baseline, "ctwin compare: goodput less the baseline's, paired trial by trial", "the baseline")};
}

}  // namespace ctwin
