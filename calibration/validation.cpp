#include "calibration/validation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

#include "core/event_log.hpp"
#include "core/version.hpp"
#include "models/fault_timeline.hpp"
#include "report/run_report.hpp"
#include "policies/robust_statistics.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

using nlohmann::ordered_json;

namespace {

constexpr double kDay = 86400, kHour = 3600;

//! One compared figure: the trials' values of it and the run's.
struct Row {
  std::string group, metric, fault_class, unit;
  std::vector<double> trials;
  std::optional<double> observed;  //!< nullopt: the trace does not say
  std::string missing_reason;
  std::string note = {};  //!< how the figure was made, where a reader must know it (a scaling)
};

ordered_json judge(const Row& row, double confidence) {
  std::vector<double> sorted = row.trials;
  std::sort(sorted.begin(), sorted.end());
  const Summary s = summarize(row.trials);
  const double lo = quantile_of_sorted(sorted, (1 - confidence) / 2), hi = quantile_of_sorted(sorted, (1 + confidence) / 2);
  ordered_json j{{"group", row.group}, {"metric", row.metric}};
  if (!row.fault_class.empty()) j["class"] = row.fault_class;
  j["unit"] = row.unit;
  j["observed"] = row.observed ? ordered_json(*row.observed) : ordered_json(nullptr);
  j["simulated"] = {{"mean", s.mean}, {"mean_ci95", {s.ci95_low, s.ci95_high}}, {"trials_interval", {lo, hi}}};
  if (!row.note.empty()) j["note"] = row.note;
  if (!row.observed) {
    j["verdict"] = "not in trace";
    j["why"] = row.missing_reason;
    return j;
  }
  // Where the run falls among the trials (mid-rank: ties count half).
  const double x = *row.observed;
  const auto below = std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
  const auto upto = std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
  j["percentile"] = 100.0 * (static_cast<double>(below) + 0.5 * static_cast<double>(upto - below)) / static_cast<double>(sorted.size());
  j["verdict"] = (x >= lo && x <= hi) ? "inside" : "outside";
  return j;
}

//! Job MTTF is wall time over interruptions: its figures are the interruption row's, inverted
//! (a monotone map keeps quantiles). A run or trial without interruptions has no finite MTTF.
ordered_json mttf_from(const ordered_json& interruptions) {
  auto inverse = [](double per_day) { return per_day > 0 ? ordered_json(24 / per_day) : ordered_json(nullptr); };
  const auto& sim = interruptions["simulated"];
  ordered_json j{{"group", "job"}, {"metric", "job_mttf"}, {"unit", "hours"}};
  j["observed"] = interruptions["observed"].is_null() ? ordered_json(nullptr) : inverse(interruptions["observed"].get<double>());
  j["simulated"] = {{"mean", inverse(sim["mean"].get<double>())},
                    {"mean_ci95", {inverse(sim["mean_ci95"][1].get<double>()), inverse(sim["mean_ci95"][0].get<double>())}},
                    {"trials_interval", {inverse(sim["trials_interval"][1].get<double>()), inverse(sim["trials_interval"][0].get<double>())}}};
  if (interruptions.contains("percentile")) j["percentile"] = 100 - interruptions["percentile"].get<double>();
  j["verdict"] = interruptions["verdict"];
  j["note"] = "wall time / interruptions: the ratio of means, with the interruptions' intervals inverted; null is no interruption";
  return j;
}

//! The job's node count from a job master's start row (" nodes=N"); -1 where the trace does not
//! say (a node's own log, a simulated run's events).
int job_nodes_of(const calib::ObservedRun& observed) {
  const auto nodes = detail_field(observed.start, "nodes");
  return nodes ? std::atoi(nodes->c_str()) : -1;
}

}  // namespace

Scenario over_traced_period(Scenario scenario, const calib::ObservedRun& observed) {
  scenario.job.horizon_us = std::max<Micros>(1, std::llround(observed.wall_s * 1e6));
  scenario.job.work_us.reset();
  scenario.job.work_steps.reset();
  return scenario;
}

namespace {

//! Every figure of the run judged against one simulation of it: the rows of one verdict.
std::vector<ordered_json> judged_rows(const Scenario& scenario, const calib::ObservedRun& observed, const RunResult& result,
                                      const ValidateOptions& options) {
  const double wall_days = observed.wall_s / kDay;
  const double gpus = static_cast<double>(scenario.job.nodes) * scenario.cluster.gpus_per_node;
  auto per_trial = [&](auto f) {
    std::vector<double> v;
    for (const TrialResult& t : result.trials) v.push_back(f(t));
    return v;
  };
  auto trial_days = [](const TrialResult& t) { return std::max(1e-12, static_cast<double>(t.wall_us) / 1e6 / kDay); };

  std::vector<ordered_json> rows;
  // Interruptions by class: the scenario's classes, then any the trace names that it lacks.
  std::set<std::string> known;
  for (std::size_t f = 0; f < scenario.faults.size(); ++f) {
    const std::string& name = scenario.faults[f].name;
    known.insert(name);
    const auto seen = observed.interruptions.find(name);
    const double observed_count = seen == observed.interruptions.end() ? 0 : static_cast<double>(seen->second);
    Row row{"interruptions per day", "interruptions_per_day", name, "per day",
            per_trial([&](const TrialResult& t) { return static_cast<double>(t.interruptions_by_class[f]) / trial_days(t); }),
            observed_count / wall_days, ""};
    if (observed.unattributed_interruptions > 0) {
      row.observed.reset();
      row.missing_reason = "the trace's interrupted rows do not name their class";
    }
    if (row.observed.value_or(0) > 0 || std::any_of(row.trials.begin(), row.trials.end(), [](double v) { return v > 0; }))
      rows.push_back(judge(row, options.confidence));
    // Faults that need not interrupt (slow nodes, corrected errors): their own rate.
    const auto faulted = observed.faults.find(name);
    const double observed_faults = faulted == observed.faults.end() ? 0 : static_cast<double>(faulted->second);
    bool differs = observed_faults != observed_count;
    for (const TrialResult& t : result.trials) differs |= t.fault_counts[f] != t.interruptions_by_class[f];
    if (differs)
      rows.push_back(judge({"faults per day", "faults_per_day", name, "per day",
                            per_trial([&](const TrialResult& t) { return static_cast<double>(t.fault_counts[f]) / trial_days(t); }),
                            observed_faults / wall_days, ""},
                           options.confidence));
  }
  // A class the scenario lacks never happens in it.
  for (const auto& [name, n] : observed.interruptions)
    if (!known.count(name)) {
      rows.push_back(judge({"interruptions per day", "interruptions_per_day", name, "per day", std::vector<double>(result.trials.size(), 0.0),
                            static_cast<double>(n) / wall_days, ""},
                           options.confidence));
    }

  const ordered_json total = judge({"job", "interruptions_per_day", "", "per day",
                                    per_trial([&](const TrialResult& t) { return static_cast<double>(t.interruptions) / trial_days(t); }),
                                    static_cast<double>(observed.total_interruptions()) / wall_days, ""},
                                   options.confidence);
  rows.push_back(total);
  rows.push_back(mttf_from(total));

  // Where the time went: only a trace with its ledger says.
  const std::optional<std::array<double, kCategoryCount>>& ledger = observed.ledger_s;
  auto from_ledger = [&](auto f) -> std::optional<double> { return ledger ? std::optional<double>(f(*ledger)) : std::nullopt; };
  const std::string no_ledger = "the trace has no ledger rows (docs/event-log.md)";
  const auto productive = static_cast<std::size_t>(Category::Productive);
  const auto lost = static_cast<std::size_t>(Category::LostProgress);
  rows.push_back(judge({"job", "ettr", "", "fraction of wall time",
                        per_trial([&](const TrialResult& t) { return static_cast<double>(t.ledger.us[productive]) / static_cast<double>(std::max<Micros>(1, t.wall_us)); }),
                        from_ledger([&](const auto& l) { return l[productive] / observed.wall_s; }), no_ledger},
                       options.confidence));
  // GPU-hours: the ledger's hours (the job's, as one clock) times the scenario's GPUs, for the trace
  // too: a log of a smaller job is scaled up to the scenario's size, and the note says so.
  const int trace_nodes = job_nodes_of(observed);
  std::string scaling = "hours x the scenario's " + std::to_string(static_cast<long>(gpus)) + " GPUs (" + std::to_string(scenario.job.nodes) +
                        " nodes x " + std::to_string(scenario.cluster.gpus_per_node) + ")";
  if (trace_nodes > 0 && trace_nodes != scenario.job.nodes)
    scaling += "; the trace's job ran on " + std::to_string(trace_nodes) + " nodes, its hours are scaled the same";
  rows.push_back(judge({"job", "lost_gpu_hours", "", "GPU-hours of work redone",
                        per_trial([&](const TrialResult& t) { return gpus * static_cast<double>(t.ledger.us[lost]) / 1e6 / kHour; }),
                        from_ledger([&](const auto& l) { return gpus * l[lost] / kHour; }), no_ledger, scaling},
                       options.confidence));
  rows.push_back(judge({"job", "unproductive_gpu_hours", "", "GPU-hours not training",
                        per_trial([&](const TrialResult& t) { return gpus * static_cast<double>(t.wall_us - t.ledger.us[productive]) / 1e6 / kHour; }),
                        from_ledger([&](const auto& l) { return gpus * (observed.wall_s - l[productive]) / kHour; }), no_ledger, scaling},
                       options.confidence));
  if (ledger)
    for (std::size_t c = 0; c < kCategoryCount; ++c)
      if (c != productive)
        rows.push_back(judge({"ledger", kCategoryKeys[c], "", "hours",
                              per_trial([&](const TrialResult& t) { return static_cast<double>(t.ledger.us[c]) / 1e6 / kHour; }),
                              (*ledger)[c] / kHour, ""},
                             options.confidence));
  return rows;
}

ordered_json summary_of(const std::vector<ordered_json>& rows, double confidence) {
  int judged = 0, outside = 0;
  for (const auto& r : rows) {
    judged += r["verdict"] != "not in trace";
    outside += r["verdict"] == "outside";
  }
  return {{"judged", judged}, {"outside", outside}, {"expected_outside_by_chance", judged * (1 - confidence)}};
}

}  // namespace

ordered_json validate_against(const Scenario& scenario, const calib::ObservedRun& observed, const ValidateOptions& options) {
  const double wall_days = observed.wall_s / kDay;
  const int trace_nodes = job_nodes_of(observed);
  // Each question its own simulation. "Behaves" holds the rates exact, but for the classes whose
  // rate is the fleet's own posterior (pooled with its own exposure under a prior): that belief is
  // the fleet's, and stays drawn. When the two questions draw alike, they are one.
  const bool uncertain = FaultTimelineModel::from(scenario).rates_uncertain();
  Scenario behaves = scenario;
  bool posterior = false, only_posteriors = true;
  for (FaultClass& f : behaves.faults) {
    if (f.uncertainty && f.uncertainty->fleet_posterior()) posterior = true;
    else if (f.uncertainty) f.uncertainty.reset(), only_posteriors = false;
  }
  const bool one = !uncertain || only_posteriors;
  ordered_json verdicts = ordered_json::array();
  for (const ValidationQuestion q : options.questions) {
    RunOptions run = options.run;
    run.rate_uncertainty = q == ValidationQuestion::Produced || posterior;
    if (one && !verdicts.empty()) {
      verdicts.back()["questions"].push_back(q == ValidationQuestion::Produced ? "produced" : "behaves");
      continue;
    }
    const Scenario& simulated = q == ValidationQuestion::Produced ? scenario : behaves;
    const RunResult result = run_trials(simulated, run);
    std::vector<ordered_json> rows = judged_rows(scenario, observed, result, options);
    ordered_json v;
    v["questions"] = ordered_json::array({q == ValidationQuestion::Produced ? "produced" : "behaves"});
    v["rates"] = !result.rates_drawn ? "exact" : q == ValidationQuestion::Behaves || only_posteriors ? "posterior" : "drawn";
    v["summary"] = summary_of(rows, options.confidence);
    v["rows"] = std::move(rows);
    verdicts.push_back(std::move(v));
  }

  ordered_json report;
  report["schema_version"] = 2;  // 2: a verdict per question (rows under verdicts)
  report["ctwin_version"] = kCtwinVersion;
  report["command"] = "validate";
  report["scenario"] = {{"name", scenario.name}, {"content_hash", scenario.content_hash}};
  report["trace"] = {{"file", observed.file},
                     {"wall_days", wall_days},
                     {"ends_with_end_row", observed.has_end},
                     {"has_ledger", observed.ledger_s.has_value()},
                     {"interruptions", observed.total_interruptions()},
                     {"unattributed_interruptions", observed.unattributed_interruptions}};
  if (observed.startup_s > 0) report["trace"]["startup_s_left_out"] = observed.startup_s;
  ordered_json unknown = ordered_json::array();  // a class the scenario lacks never happens in it
  for (const auto& [name, n] : observed.interruptions)
    if (std::none_of(scenario.faults.begin(), scenario.faults.end(), [&](const FaultClass& f) { return f.name == name; }))
      unknown.push_back({{"class", name}, {"interruptions", n}});
  if (!unknown.empty()) report["trace"]["classes_not_in_scenario"] = unknown;
  // The scope: a log and a scenario of different jobs compare a part with a whole.
  std::vector<std::string> warnings;
  const int nodes_known = scenario.job.nodes + scenario.cluster.spare_nodes;
  if (observed.highest_node >= nodes_known)
    warnings.push_back("the trace names node-" + std::to_string(observed.highest_node) + "; the scenario has " +
                       std::to_string(nodes_known) + " job and spare nodes");
  if (!observed.start.empty()) {
    report["trace"]["start"] = observed.start;
    if (trace_nodes > 0 && trace_nodes != scenario.job.nodes)
      warnings.push_back("the trace is the log of a job of " + std::to_string(trace_nodes) + " nodes, the scenario's job has " +
                         std::to_string(scenario.job.nodes));
    else if (trace_nodes < 0 && scenario.job.nodes > 1)
      warnings.push_back("the trace is one node's live log (its start row), the scenario's job has " +
                         std::to_string(scenario.job.nodes) +
                         " nodes: the job's rates and ledger are compared with one node's; validate the job's log, or a "
                         "one-node scenario");
  }
  if (!warnings.empty()) {
    std::string text;
    for (const auto& w : warnings) text += (text.empty() ? "" : "; ") + w;
    report["trace"]["warning"] = text;
  }
  report["trials"] = options.run.trials;
  report["seed"] = options.run.seed;
  report["engine"] = engine_name(options.run.engine);
  report["confidence"] = options.confidence;
  report["rates_uncertain"] = uncertain;
  report["verdicts"] = std::move(verdicts);
  return report;
}

}  // namespace ctwin
