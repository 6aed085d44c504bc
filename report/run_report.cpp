#include "report/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "core/event_log.hpp"
#include "report/run_sensitivity_report.hpp"

#include "sim/statistics.hpp"

namespace ctwin {
namespace {

using ordered_json = nlohmann::ordered_json;

//! Wall days of the trials that finished their work; nullopt for horizon runs.
std::optional<std::pair<Summary, std::size_t>> time_to_train(const RunReportInput& in) {
  if (!in.scenario.job.work_us) return std::nullopt;
  return std::make_pair(in.result.tally.days_to_train().summary(), in.result.tally.unfinished());
}

struct Compared {
  const Comparison* published;
  Summary simulated;
  const char* verdict;
};

//! A published figure is one run: it is judged against the spread of single trials (p5-p95),
//! or, for a bound, against the median trial.
std::vector<Compared> compare_with_published(const RunReportInput& in) {
  std::vector<Compared> out;
  for (std::size_t i = 0; i < in.scenario.compare.size(); ++i) {
    const Comparison& c = in.scenario.compare[i];
    const Summary sim = in.result.tally.compared(i).summary();
    bool consistent = false;
    switch (c.relation) {
      case Comparison::Relation::About: consistent = sim.p5 <= c.published && c.published <= sim.p95; break;
      case Comparison::Relation::AtMost: consistent = sim.p50 <= c.published; break;
      case Comparison::Relation::AtLeast: consistent = sim.p50 >= c.published; break;
    }
    out.push_back({&c, sim, sim.n == 0 ? "no data" : consistent ? "consistent" : "outside"});
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

//! The remediation policies in force, one line (empty when there are none).
//! Where the step time comes from, said: modelled (the workload on the fabric), or stated, and
//! then the model's beside it when the two differ by more than a tenth (a published step the model
//! does not reproduce is worth knowing before trusting either).
std::string step_line(const Job& job, const RunOptions& options) {
  const std::string step = format_duration(micros_to_seconds(job.step_us));
  if (job.step_modelled() && options.step_draw) {
    const double point = micros_to_seconds(job.step_us);
    return step + " modelled: the workload on the fabric (ctwin step); each trial draws it from " +
           format_duration(point * options.step_draw->low) + " .. " + format_duration(point * options.step_draw->high) +
           " (its range over what was assumed, --step-uncertainty on)";
  }
  if (job.step_modelled()) return step + " modelled: the workload on the fabric (ctwin step)";
  std::string line = step + " stated (job.step_time)";
  if (job.modelled_step_us > 0) {
    const double off = static_cast<double>(job.modelled_step_us) / static_cast<double>(job.step_us) - 1;
    char text[160];
    std::snprintf(text, sizeof text, "; the workload models %s on this fabric (%+.0f %%)%s", format_duration(micros_to_seconds(job.modelled_step_us)).c_str(),
                  100 * off, std::abs(off) > 0.1 ? ", more than a tenth apart: the run uses the stated one" : "");
    line += text;
  }
  return line;
}

std::string policies_line(const Scenario& s) {
  std::string line;
  auto add = [&line](const std::string& part) { line += (line.empty() ? "" : "; ") + part; };
  if (!s.xid_actions.empty()) {
    std::string table;
    for (const auto& [xid, spec] : s.xid_actions) table += (table.empty() ? "" : ", ") + std::to_string(xid) + " " + to_string(spec.action);
    add("xid " + table);
  }
  if (s.elastic.shrink)
    add("shrink by replicas of " + std::to_string(s.elastic.replica_nodes) + " nodes (at least " +
        std::to_string(s.elastic.min_replicas) + ")" + (s.elastic.regrow ? ", regrow" : ""));
  if (s.precheck.enabled) add("precheck " + format_duration(micros_to_seconds(s.precheck.duration_us)));
  if (s.hang_detection) {
    char factor[32];
    std::snprintf(factor, sizeof factor, "%g", s.hang_detection->factor);
    add(std::string("hang watchdog ") + factor + " steps");
  }
  if (s.stragglers.evict) add("evict stragglers after " + format_duration(micros_to_seconds(s.stragglers.observe_us)));
  const SparePoolSpec& pool = s.spare_pool;
  if (pool.top_up_nodes > 0)
    add("top up " + std::to_string(pool.top_up_nodes) + " spares in " + format_duration(micros_to_seconds(pool.top_up_delay_us)) +
        " when " + (pool.top_up_below == 1 ? std::string("the pool is empty") : "fewer than " + std::to_string(pool.top_up_below) + " are left") +
        " (" + std::to_string(pool.top_up_at_most) + " at most)");
  if (pool.expedited_repair_us) add("repairs within " + format_duration(micros_to_seconds(*pool.expedited_repair_us)) + " while the pool is dry");
  return line;
}

ordered_json shares_json(const LedgerShares& g) {
  ordered_json shares;
  for (std::size_t c = 0; c < kCategoryCount; ++c) shares[kCategoryKeys[c]] = g.share(c);
  return shares;
}

ordered_json tail_json(const RunTail& t) {
  auto single = [](const LedgerShares& g) {
    return ordered_json{{"trial", g.trial}, {"goodput", g.goodput()}, {"ledger_share", shares_json(g)}};
  };
  const std::size_t largest = t.at_or_below_p5.largest_loss();
  return ordered_json{{"p5", t.p5},
                      {"at_or_below_p5", {{"trials", t.at_or_below_p5.trials}, {"goodput", t.at_or_below_p5.goodput()},
                                          {"ledger_share", shares_json(t.at_or_below_p5)}}},
                      {"p5_run", single(t.p5_run)},
                      {"median_run", single(t.median_run)},
                      {"largest_loss", largest < kCategoryCount ? ordered_json(kCategoryKeys[largest]) : ordered_json(nullptr)}};
}

//! Where the low runs' wall time went beside the median run's: the categories any of them spent time in.
std::string tail_text(const RunTail& t) {
  std::ostringstream out;
  char line[200];
  const LedgerShares* groups[] = {&t.at_or_below_p5, &t.p5_run, &t.median_run};
  std::snprintf(line, sizeof line, "\n  %-34s %16s %16s %16s\n", "where the time went, share of wall", "at or below p5", "the p5 run",
                "the median run");
  out << line;
  const std::string below = thousands(static_cast<long long>(t.at_or_below_p5.trials)) + " of " + thousands(static_cast<long long>(t.run_trials));
  std::snprintf(line, sizeof line, "  %-34s %16s %16s %16s\n", "", below.c_str(), ("trial " + std::to_string(t.p5_run.trial)).c_str(),
                ("trial " + std::to_string(t.median_run.trial)).c_str());
  out << line;
  for (std::size_t c = 0; c < kCategoryCount; ++c) {
    if (std::all_of(std::begin(groups), std::end(groups), [c](const LedgerShares* g) { return g->us[c] == 0; })) continue;
    std::snprintf(line, sizeof line, "    %-32s %14.2f %% %14.2f %% %14.2f %%\n", kCategoryKeys[c], 100 * groups[0]->share(c),
                  100 * groups[1]->share(c), 100 * groups[2]->share(c));
    out << line;
  }
  const std::size_t largest = t.at_or_below_p5.largest_loss();
  if (largest < kCategoryCount) {
    std::snprintf(line, sizeof line, "  the runs at or below p5 (%s %%) lost most to %s: %.2f %% of their wall time (the median run: %.2f %%)\n",
                  fixed(100 * t.p5, 2).c_str(), kCategoryKeys[largest], 100 * t.at_or_below_p5.share(largest), 100 * t.median_run.share(largest));
    out << line;
  }
  out << "  (--timeline-trial p5 and p50 draw the p5 and median runs)\n";
  return out.str();
}

}  // namespace

std::string thousands(long long v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

ordered_json summary_json(const Summary& s) {
  return ordered_json{{"mean", s.mean}, {"ci95_low", s.ci95_low}, {"ci95_high", s.ci95_high},
                      {"p5", s.p5},     {"p50", s.p50},           {"p95", s.p95}};
}

const char* engine_name(EngineKind engine) { return engine == EngineKind::Simgrid ? "simgrid" : "native"; }

std::optional<std::string> window_warning(const Scenario& scenario, const RunResult& result) {
  if (!scenario.calibrated_window_us || result.tally.trials() == 0) return std::nullopt;
  const Micros longest = result.tally.longest_wall_us();
  if (longest <= *scenario.calibrated_window_us) return std::nullopt;
  return "the forecast runs up to " + format_duration(micros_to_seconds(longest)) + ", past the " +
         format_duration(micros_to_seconds(*scenario.calibrated_window_us)) +
         " of traces its rates were calibrated on: they are taken as constant beyond it (calibrate's trend test says whether they were)";
}

std::string report_json(const RunReportInput& in) {
  const RunResult& r = in.result;
  ordered_json j;
  j["schema_version"] = kReportSchemaVersion;
  j["ctwin_version"] = kCtwinVersion;
  j["scenario"] = {{"name", in.scenario.name}, {"content_hash", in.scenario.content_hash}};
  j["seed"] = in.options.seed;
  j["trials"] = in.options.trials;
  j["engine"] = engine_name(in.options.engine);
  j["goodput"] = summary_json(r.tally.goodput().summary());
  j["interruptions_per_run"] = summary_json(r.tally.interruptions().summary());
  // What the spread of single trials (p5..p95, the predictive interval of one run) carries: Monte
  // Carlo noise and, when drawn, the rates' uncertainty. The mean's CI is Monte Carlo noise only.
  j["rates_drawn"] = r.rates_drawn;
  const Job& job = in.scenario.job;
  j["step"] = {{"seconds", micros_to_seconds(job.step_us)}, {"source", job.step_modelled() ? "modelled" : "stated"}};
  if (job.modelled_step_us > 0) j["step"]["modelled_seconds"] = micros_to_seconds(job.modelled_step_us);
  if (in.options.step_draw)
    j["step"]["drawn"] = {{"min_seconds", micros_to_seconds(job.step_us) * in.options.step_draw->low},
                          {"max_seconds", micros_to_seconds(job.step_us) * in.options.step_draw->high},
                          {"work_in_steps", in.options.step_draw->work_in_steps}};
  ordered_json ledger;
  for (std::size_t c = 0; c < kCategoryCount; ++c) ledger[kCategoryKeys[c]] = r.tally.mean_ledger_hours(c);
  j["ledger_hours"] = ledger;
  if (r.tail) j["tail"] = tail_json(*r.tail);
  if (in.sensitivity) j["sensitivity"] = run_sensitivity_json(*in.sensitivity);
  ordered_json interruptions = ordered_json::object(), episodes = ordered_json::object();
  for (std::size_t f = 0; f < in.scenario.faults.size(); ++f) {
    interruptions[in.scenario.faults[f].name] = r.tally.interruptions_per_day(f);
    episodes[in.scenario.faults[f].name] = r.tally.fault_episodes_per_day(f);
  }
  j["interruptions_per_day"] = interruptions;
  j["fault_episodes_per_day"] = episodes;
  j["checkpoint"] = {{"interval_s", micros_to_seconds(r.config.interval_us)},
                     {"save_s", micros_to_seconds(r.costs.save_us)},
                     {"restore_s", micros_to_seconds(r.costs.restore_us)},
                     {"costs_from", r.costs.source}};
  if (auto ttt = time_to_train(in)) {
    // Over the trials that finished; null when none did (a mean of nothing is not zero).
    ordered_json t = ttt->first.n > 0 ? summary_json(ttt->first)
                                       : ordered_json{{"mean", nullptr}, {"ci95_low", nullptr}, {"ci95_high", nullptr},
                                                      {"p5", nullptr},   {"p50", nullptr},      {"p95", nullptr}};
    t["unfinished_trials"] = ttt->second;
    j["time_to_train_days"] = t;
  }
  if (!in.scenario.compare.empty()) {
    ordered_json comparison = ordered_json::array();
    for (const auto& c : compare_with_published(in))
      comparison.push_back({{"metric", to_string(c.published->metric)},
                            {"relation", to_string(c.published->relation)},
                            {"published", c.published->published},
                            {"simulated", summary_json(c.simulated)},
                            {"verdict", c.verdict},
                            {"source", c.published->source}});
    j["comparison"] = std::move(comparison);
  }
  ordered_json trials = ordered_json::array();
  const auto& kept = r.tally.first_trials();
  const std::size_t shown = std::min(kept.size(), kPerTrialJsonRows);
  for (std::size_t i = 0; i < shown; ++i) {
    const TrialResult& t = kept[i];
    ordered_json row;
    row["seed"] = t.seed;
    row["wall_hours"] = micros_to_hours(t.wall_us);
    row["goodput"] = goodput(t);
    ordered_json l;
    for (std::size_t c = 0; c < kCategoryCount; ++c) l[kCategoryKeys[c]] = micros_to_hours(t.ledger.us[c]);
    row["ledger_hours"] = l;
    trials.push_back(std::move(row));
  }
  j["per_trial"] = std::move(trials);
  if (shown < r.tally.trials())  // a row is ~1.5 KB in memory: a million of them would be the run's largest cost
    j["per_trial_omitted"] = {{"rows", r.tally.trials() - shown},
                              {"why", "per_trial holds the first " + std::to_string(kPerTrialJsonRows) + " trials; --csv writes a row for every one"}};
  return j.dump(2) + "\n";
}

std::string summary_text(const RunReportInput& in) {
  const Scenario& s = in.scenario;
  const RunResult& r = in.result;
  std::ostringstream out;
  const Summary g = r.tally.goodput().summary();
  out << "ctwin forecast: " << s.name << "  (scenario " << s.content_hash << ", " << in.options.trials
      << " trials, seed " << in.options.seed << ", " << engine_name(in.options.engine) << " engine)\n";
  out << "  cluster  " << thousands(s.cluster.nodes) << " nodes x " << s.cluster.gpus_per_node << " " << s.cluster.gpu_model
      << "; job on " << thousands(s.job.nodes) << " nodes (" << thousands(static_cast<long long>(s.job.nodes) * s.cluster.gpus_per_node)
      << " GPUs), " << s.cluster.spare_nodes << " spares\n";
  out << "  run      "
      << (s.job.horizon_us ? "horizon " + format_duration(micros_to_seconds(*s.job.horizon_us))
                           : "work " + format_duration(micros_to_seconds(*s.job.work_us)) + " failure-free")
      << "; checkpoint every " << format_duration(micros_to_seconds(r.config.interval_us)) << ", save "
      << format_duration(micros_to_seconds(r.costs.save_us)) << ", restore "
      << format_duration(micros_to_seconds(r.costs.restore_us)) << " (" << r.costs.source << ")\n";
  out << "  step     " << step_line(s.job, in.options) << "\n";
  if (const std::string p = policies_line(s); !p.empty()) out << "  policies " << p << "\n";
  out << "\n";
  // Two intervals, named: the mean's (Monte Carlo noise, shrinking with trials) and one run's
  // (the 90 % predictive interval: what a single job will see, with the rates' uncertainty when drawn).
  out << "  goodput (ETTR)  " << fixed(100 * g.mean, 2) << " %   mean 95% CI [" << fixed(100 * g.ci95_low, 2) << ", "
      << fixed(100 * g.ci95_high, 2) << "]   one run p5 " << fixed(100 * g.p5, 2) << "  p50 " << fixed(100 * g.p50, 2)
      << "  p95 " << fixed(100 * g.p95, 2) << "\n";
  const Summary n = r.tally.interruptions().summary();
  out << "  interruptions   " << fixed(n.mean, 1) << " per run   mean 95% CI [" << fixed(n.ci95_low, 1) << ", " << fixed(n.ci95_high, 1)
      << "]   one run p5 " << fixed(n.p5, 0) << "  p50 " << fixed(n.p50, 0) << "  p95 " << fixed(n.p95, 0) << "\n";
  out << "                  " << (r.rates_drawn ? "one run's interval has the rates' uncertainty in it (--rate-uncertainty off: held exact)"
                                                : "rates held exact: one run's interval is Monte Carlo noise only") << "\n";
  if (auto ttt = time_to_train(in)) {
    if (ttt->first.n == 0) {
      out << "  time to train   no trial finished its work within max_wall ("
          << format_duration(micros_to_seconds(s.max_wall_us)) << ")\n";
    } else {
      out << "  time to train   " << fixed(ttt->first.mean, 2) << " days   95% CI [" << fixed(ttt->first.ci95_low, 2)
          << ", " << fixed(ttt->first.ci95_high, 2) << "]   p95 " << fixed(ttt->first.p95, 2) << " days";
      if (ttt->second > 0)
        out << "\n                  over the " << ttt->first.n << " trials that finished; " << ttt->second
            << " stopped unfinished at max_wall (" << format_duration(micros_to_seconds(s.max_wall_us)) << ")";
      out << "\n";
    }
  }
  if (s.job.tokens_per_step && s.job.step_us > 0) {
    const double tokens_per_s = *s.job.tokens_per_step / micros_to_seconds(s.job.step_us);
    out << "  tokens per day  " << fixed(tokens_per_s * 86400 * g.mean / 1e9, 1) << " B   (failure-free "
        << fixed(tokens_per_s * 86400 / 1e9, 1) << " B)\n";
  }
  // An interruption stops the job; a fault episode is any fault that struck it (a slow GPU, a
  // counted-only Xid, a flap ridden out are episodes that interrupt nothing).
  char line[160];
  std::snprintf(line, sizeof line, "\n  %-34s %13s  %14s\n", "per day, by cause", "interruptions", "fault episodes");
  out << line;
  double interruptions = 0, episodes = 0;
  for (std::size_t f = 0; f < s.faults.size(); ++f) {
    const double stopped = r.tally.interruptions_per_day(f), struck = r.tally.fault_episodes_per_day(f);
    interruptions += stopped;
    episodes += struck;
    std::snprintf(line, sizeof line, "    %-32s %13.3f  %14.3f   (%s, %s)\n", s.faults[f].name.c_str(), stopped, struck,
                  to_string(s.faults[f].effect), to_string(s.faults[f].action));
    out << line;
  }
  std::snprintf(line, sizeof line, "    %-32s %13.3f  %14.3f\n", "all", interruptions, episodes);
  out << line;
  double wall_hours = 0;
  for (std::size_t c = 0; c < kCategoryCount; ++c) wall_hours += r.tally.mean_ledger_hours(c);
  out << "\n  ledger, mean per trial                hours        %\n";
  for (std::size_t c = 0; c < kCategoryCount; ++c) {
    const double h = r.tally.mean_ledger_hours(c);
    std::snprintf(line, sizeof line, "    %-32s %9.2f  %7.3f\n", kCategoryKeys[c], h,
                  wall_hours > 0 ? 100 * h / wall_hours : 0.0);
    out << line;
  }
  std::snprintf(line, sizeof line, "    %-32s %9.2f  %7.3f\n", "wall", wall_hours, 100.0);
  out << line;
  if (r.tail) out << tail_text(*r.tail);
  if (in.sensitivity) out << run_sensitivity_text(*in.sensitivity);
  if (!s.compare.empty()) {
    out << "\n  compared with published figures this scenario was not built from\n"
        << "    metric                       published          simulated mean [95% CI]      single runs p5..p95    verdict\n";
    for (const auto& c : compare_with_published(in)) {
      std::snprintf(line, sizeof line, "    %-28s %-8s %8.3f  %8.3f [%8.3f, %8.3f]   %8.3f..%-8.3f   %s\n",
                    to_string(c.published->metric), to_string(c.published->relation), c.published->published,
                    c.simulated.mean, c.simulated.ci95_low, c.simulated.ci95_high, c.simulated.p5, c.simulated.p95,
                    c.verdict);
      out << line << "      " << c.published->source << "\n";
    }
  }
  return out.str();
}

std::string trials_csv_header(const Scenario& scenario) {
  std::string out = "trial,seed,wall_hours,goodput,finished";
  for (const char* key : kCategoryKeys) out += std::string(",") + key + "_hours";
  for (const auto& f : scenario.faults) out += ",faults_" + f.name;
  for (const auto& f : scenario.faults) out += ",interruptions_" + f.name;
  return out + "\n";
}

std::string trials_csv_row(int index, const TrialResult& t) {
  std::string out;
  char buffer[64];
  auto num = [&](double v) {
    std::snprintf(buffer, sizeof buffer, "%.9g", v);
    out += ',';
    out += buffer;
  };
  out += std::to_string(index) + ',' + std::to_string(t.seed);
  num(micros_to_hours(t.wall_us));
  num(goodput(t));
  out += t.finished_work ? ",1" : ",0";
  for (Micros us : t.ledger.us) num(micros_to_hours(us));
  for (auto c : t.fault_counts) out += ',' + std::to_string(c);
  for (auto c : t.interruptions_by_class) out += ',' + std::to_string(c);
  return out + '\n';
}

std::string trial_event_log(const Scenario& scenario, const std::vector<RunEvent>& events, const TrialResult& trial) {
  return event_log_csv(event_classes(scenario.faults), events, &trial.ledger, trial.wall_us);
}

}  // namespace ctwin
