#include "calibration/calibrate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include "calibration/evidence.hpp"
#include "calibration/fleet_pooling.hpp"
#include "calibration/scenario_update.hpp"
#include "calibration/step_times.hpp"
#include "core/event_log.hpp"
#include "core/version.hpp"
#include "models/json_document.hpp"
#include "models/scenario_loader.hpp"

namespace ctwin::calib {

namespace {

constexpr double kHour = 3600;  //!< the trend evidence's clocks are in seconds

std::string read_file(const std::string& path) {
  std::ifstream in = open_trace(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string host_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.substr(0, name.find('.'));
}

//! A base scenario's document, or a skeleton to hold the fitted classes.
nlohmann::ordered_json base_document(const CalibrateOptions& options, const Evidence& evidence) {
  if (options.base) return parse_json_document<nlohmann::ordered_json>(read_file(*options.base), *options.base);
  const int nodes = std::max<int>(1, static_cast<int>(evidence.nodes.size()));
  return {{"schema_version", 1},
          {"name", "calibrated"},
          {"description", "Fitted by ctwin calibrate without a base: the cluster, job, checkpoint and recovery numbers are "
                          "placeholders to edit; the fault rates are fitted (see each class's calibration)."},
          {"cluster", {{"nodes", nodes}, {"gpus_per_node", options.gpus_per_node}, {"gpu", {{"model", "unknown"}, {"peak_bf16", "989TFLOP/s"}}}, {"spare_nodes", 0}}},
          {"job", {{"nodes", nodes}, {"step_time", "10s"}, {"horizon", "30d"}}},
          {"faults", nlohmann::ordered_json::array()},
          {"checkpoint", {{"save_time", "60s"}, {"restore_time", "5min"}}},
          {"restart", {{"overhead", "10min"}}},
          {"spares", {{"repair_time", "2d"}}},
          {"policies", {{"checkpoint", {{"type", "fixed"}, {"interval", "1h"}}}}}};
}

//! A trainer's log: Megatron-LM iteration lines among its first few thousand lines.
bool is_megatron_log(const std::string& path) {
  std::ifstream in = open_trace(path);
  std::string line;
  for (int n = 0; n < 5000 && std::getline(in, line); ++n)
    if (is_megatron_line(line)) return true;
  return false;
}

void add_steps(Evidence& into, const StepLog& log) {
  log.report.require_some();
  into.steps.insert(into.steps.end(), log.records.begin(), log.records.end());
  into.step_sources.push_back(log.report.file + " (" + std::to_string(log.records.size()) + " step times)");
  into.traces.push_back(report_json(log.report));
}

nlohmann::ordered_json step_times_json(const StepTimeFit& f, double confidence) {
  nlohmann::ordered_json j{{"records", f.records}, {"nodes", f.nodes}, {"median_s", f.median_s}, {"mean_s", f.mean_s},
                           {"p5_s", f.p5_s}, {"p95_s", f.p95_s}, {"p99_s", f.p99_s}};
  j["slow_steps"] = {{"above_median_times", f.slow_step_factor}, {"share", interval_json(f.slow_step_share)}, {"confidence", confidence}};
  if (f.nodes >= 3) {
    nlohmann::ordered_json slow = nlohmann::ordered_json::array();
    for (const SlowNode& n : f.slow_nodes)
      slow.push_back({{"node", n.node}, {"median_s", n.median_s}, {"speed_factor", n.speed_factor}, {"robust_z", n.robust_z}, {"steps", n.steps}});
    j["slow_nodes"] = slow;
    j["slow_node_share"] = interval_json(f.slow_node_share);
    j["slow_node_rule"] = f.peer_groups > 0
                              ? "robust z of the node's median step time above 3.5 among its peers' medians, peers being the "
                                "nodes of its stage and role (the straggler policy's)"
                              : "robust z of the node's median step time above 3.5 among every node's median (the straggler policy's)";
    j["peer_groups"] = f.peer_groups;
    if (f.peer_groups == 0)
      j["warning"] = "the log names no pipeline stage or role: every node is compared with every node, so the nodes of a "
                     "stage that is long by design (a pipeline's last) read as slow; add stage (and role) columns";
  }
  return j;
}

using Model = std::pair<const char*, std::function<double(double)>>;

//! The empirical CDF beside fitted ones at the same times: what the report's plots draw.
nlohmann::ordered_json cdf_json(const std::vector<CdfPoint>& points, const std::vector<Model>& models) {
  nlohmann::ordered_json j;
  std::vector<double> hours, empirical;
  for (const CdfPoint& p : points) {
    hours.push_back(p.time);
    empirical.push_back(p.cdf);
  }
  j["hours"] = hours;
  j["empirical"] = empirical;
  for (const auto& [name, cdf] : models) {
    std::vector<double> fitted;
    for (double t : hours) fitted.push_back(cdf(t));
    j[name] = fitted;
  }
  return j;
}

nlohmann::ordered_json duration_cdf_json(const std::vector<double>& durations, const LognormalFit& fit) {
  std::vector<Life> lives;
  for (double d : durations) lives.push_back({d, true});
  const boost::math::normal normal;
  return cdf_json(empirical_cdf(lives), {{"lognormal", [&](double t) {
                                            if (t <= 0) return 0.0;
                                            if (!(fit.sigma.estimate > 0)) return t >= fit.median ? 1.0 : 0.0;  // all one duration
                                            return boost::math::cdf(normal, (std::log(t) - fit.mu.estimate) / fit.sigma.estimate);
                                          }}});
}


//! Each trace into the evidence, by its kind (told by its first line): event logs, sacct
//! records, per-node step times, Megatron-LM logs, incident tables, else a kernel log. Streamed:
//! a million-line log is never held whole.
Evidence read_traces(const std::vector<std::string>& traces, const std::optional<Scenario>& base, const CalibrateOptions& options) {
  Evidence evidence;
  std::vector<XidLog> xid_logs;  // read together: their exposure is shared
  std::vector<std::size_t> xid_slots;
  for (const std::string& path : traces) {
    const std::string head = first_line(path);
    std::ifstream in = open_trace(path);
    if (looks_like_event_log(head)) {
      const EventLog log = read_event_log(in, path);
      log.report.require_some();
      if (!base) throw TraceUnreadable(path + ": an event log needs --base: the job's nodes and each class's component");
      add_event_log(evidence, log, *base);
    } else if (head.rfind("JobID|", 0) == 0 || head.find("|JobID|") != std::string::npos) {
      const SlurmLog log = read_sacct(in, path);
      log.report.require_some();
      add_sacct(evidence, log);
    } else if (const auto cols = split_csv(head); std::find(cols.begin(), cols.end(), "duration_s") != cols.end()) {
      add_steps(evidence, read_step_csv(in, path));
    } else if (is_megatron_log(path)) {
      add_steps(evidence, read_megatron_log(in, path));
    } else if (head.rfind("class,", 0) == 0) {
      const IncidentTable table = read_incident_table(in, path);
      table.report.require_some();
      add_incidents(evidence, table);
    } else {
      XidLog log = read_xid_log(in, path, host_of(path), options.year);
      // A clean node log (timestamps, no Xid) is exposure; a file with no kernel line at all is not a kernel log.
      if (log.window.empty()) log.report.require_some();
      xid_slots.push_back(evidence.traces.size());
      evidence.traces.push_back(nullptr);
      xid_logs.push_back(std::move(log));
    }
  }
  if (!xid_logs.empty()) add_xid_logs(evidence, xid_logs, xid_slots, base ? &*base : nullptr, options);
  return evidence;
}


nlohmann::ordered_json trend_json(const TrendTest& t) {
  return {{"test", "laplace"},
          {"events", t.events},
          {"statistic", t.statistic},
          {"p_value", t.p_value},
          {"direction", t.statistic > 0 ? "rising" : "falling"}};
}

//! Laplace's trend test for every class seen on one clock (Holm over the classes tested) and for
//! the fleet as a whole: a rate that rises or falls over the traces is not the constant rate a
//! scenario holds, and a forecast past the window would carry it on or not. Said, with a warning.
void add_trend_tests(const Evidence& evidence, const CalibrateOptions& options, std::vector<ClassEstimate>& estimates,
                     nlohmann::ordered_json& classes, nlohmann::ordered_json& report) {
  const double alpha = 1 - options.confidence;
  std::vector<std::pair<double, std::size_t>> family;  // p-value, index in `classes`
  std::size_t i = 0;
  for (const auto& [name, c] : evidence.classes) {
    if (!c.clocks_mixed)
      if (const auto t = laplace_trend(c.fault_times, c.windows)) {
        classes[i]["trend"] = trend_json(*t);
        family.emplace_back(t->p_value, i);
      }
    ++i;
  }
  std::sort(family.begin(), family.end());
  bool stopped = false;
  for (std::size_t j = 0; j < family.size(); ++j) {
    auto& trend = classes[family[j].second]["trend"];
    const double level = alpha / static_cast<double>(family.size() - j);
    stopped = stopped || family[j].first >= level;
    trend["holm_level"] = level;
    trend["significant"] = !stopped;
    if (stopped) continue;
    const std::size_t k = family[j].second;
    const std::string direction = trend["direction"].get<std::string>();  // (adding keys below moves `trend`)
    ClassEstimate& e = estimates[k];
    const ClassEvidence& c = evidence.classes.at(e.name);
    // Enough failures, a rate from count / exposure (not a Weibull's), a shape inside its search:
    // the power law carries the trend into the forecast.
    double window_s = 0;
    for (const auto& [a, b] : c.windows) window_s += std::max(b - a, 0.0);
    const double parts = window_s > 0 ? c.exposure_hours * kHour / window_s : 1;  // e.g. a node's GPUs
    const auto law = e.count >= kMinFailuresForShape ? fit_power_law(c.fault_times, c.windows, parts) : std::nullopt;
    // A Weibull life from birth and a trend in calendar time both make a young fleet's faults rise:
    // the one with the higher likelihood (AIC, two parameters each) is taken.
    const bool weibull_better = e.shape_trusted && (e.from_midlife || !law || e.lifetimes->log_likelihood >= law->log_likelihood);
    if (law && law->shape > 0.101 && law->shape < 9.9 && !weibull_better) {
      if (e.shape_trusted) {
        e.shape_trusted = false;
        classes[k]["shape_choice"]["distribution"] = "exponential";
        classes[k]["shape_choice"]["reason"] = "a trend in calendar time (a power law, log L " + number(law->log_likelihood) +
                                               ") explains the faults better than a Weibull life (log L " + number(e.lifetimes->log_likelihood) + ")";
        classes[k].erase("warning");
      }
      e.trend = law;
      const Interval observed = e.observed_per_hour;
      e.rate_per_hour = {observed.estimate * law->end_factor, observed.lower * law->end_factor, observed.upper * law->end_factor};
      classes[k]["trend"]["power_law"] = {{"shape", law->shape}, {"age_hours", law->age / kHour}, {"end_factor", law->end_factor},
                                          {"events", law->events}, {"log_likelihood", law->log_likelihood}};
      classes[k]["rate_per_" + e.component + "_year"] = interval_json(e.rate_per_hour, kHoursPerYear);
      classes[k]["rate_observed_per_" + e.component + "_year"] = interval_json(observed, kHoursPerYear);
      classes[k]["rate_from"] = "the power law's intensity at the traces' end (Crow-AMSAA)";
      classes[k]["trend_warning"] = "the rate is " + direction + " over the traces (Laplace p " + number(family[j].first) +
                                    "): written as a power law in time of shape " + number(law->shape) + ", from " +
                                    number(e.rate_per_hour.estimate * kHoursPerYear) + "/" + e.component + "-year at the traces' end (" +
                                    number(observed.estimate * kHoursPerYear) + " on average over them); a forecast carries the trend on";
    } else {
      classes[k]["trend_warning"] = "the rate is " + direction + " over the traces (Laplace p " + number(family[j].first) +
                                    "): a constant rate fits the window's average, not its end";
    }
  }
  if (!evidence.fleet.clocks_mixed)
    if (const auto t = laplace_trend(evidence.fleet.fault_times, evidence.fleet.windows)) {
      report["trend"] = trend_json(*t);
      report["trend"]["significant"] = t->p_value < alpha;
      if (t->p_value < alpha)
        report["trend"]["warning"] = "the fleet's faults are " + report["trend"]["direction"].get<std::string>() + " over the traces (Laplace p " +
                                     number(t->p_value) + "): the rates calibrated are the window's average, and a forecast past it extrapolates";
    }
}

//! Each class's rate (count over exposure, exact Poisson interval) and, with two failures or more,
//! its censored Weibull fit of lifetimes: the report's `classes`.
std::vector<ClassEstimate> fit_classes(const Evidence& evidence, const CalibrateOptions& options, nlohmann::ordered_json& report) {
  std::vector<ClassEstimate> estimates;
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const auto& [name, c] : evidence.classes) {
    ClassEstimate e;
    e.name = name;
    e.component = c.component;
    e.xid = c.xid;
    e.count = c.count;
    e.exposure_hours = c.exposure_hours;
    e.rate_per_hour = e.observed_per_hour = poisson_rate(c.count, c.exposure_hours, options.confidence);
    e.effect = c.effect;
    e.provenance = c.provenance;
    nlohmann::ordered_json j{{"class", name},
                             {"component", c.component},
                             {"count", c.count},
                             {"exposure_" + c.component + "_hours", c.exposure_hours},
                             {"rate_per_" + c.component + "_year", interval_json(e.rate_per_hour, kHoursPerYear)},
                             {"provenance", c.provenance}};
    if (c.xid > 0) j["xid"] = c.xid;
    if (c.count > 0 && !(c.exposure_hours > 0)) {
      // Faults with no time they were seen over (a kernel log of one line: no window): no rate
      // follows from them, and 0 would say the opposite of what they show.
      j.erase("rate_per_" + c.component + "_year");
      j["warning"] = number(c.count) + " faults but no exposure (the traces give no time span over which they were seen): no rate "
                     "written; give the logs that cover the period, or a clean log per host";
      classes.push_back(j);
      estimates.push_back(std::move(e));
      continue;
    }
    if (std::count_if(c.lives.begin(), c.lives.end(), [](const Life& l) { return l.failed; }) >= 2) {
      e.lifetimes = fit_weibull(c.lives, options.confidence);
      j["weibull"] = {{"shape", interval_json(e.lifetimes->shape)},
                      {"scale_hours", interval_json(e.lifetimes->scale)},
                      {"shape_one_p_value", e.lifetimes->shape_one_p_value},
                      {"failures", e.lifetimes->failures},
                      {"censored", e.lifetimes->censored}};
      j["weibull"]["mean_life_hours"] = interval_json(e.lifetimes->mean_life);
      const WeibullFit& w = *e.lifetimes;
      e.from_midlife = std::any_of(c.lives.begin(), c.lives.end(), [](const Life& l) { return l.from_midlife; });
      // Lives from mid-life are forward recurrence times: their model CDF is 1 - Q(1/k, (t/scale)^k).
      auto weibull_cdf = [&w, midlife = e.from_midlife](double t) {
        const double x = std::pow(t / w.scale.estimate, w.shape.estimate);
        return midlife ? 1 - boost::math::gamma_q(1 / w.shape.estimate, x) : 1 - std::exp(-x);
      };
      j["lifetime_cdf"] = cdf_json(empirical_cdf(c.lives), {{"weibull", weibull_cdf},
                                                            {"exponential", [&w](double t) { return 1 - std::exp(-t / w.exponential_scale); }}});
      j["weibull"]["lives_from"] = e.from_midlife ? "mid-life: each part from the trace's start, its age unknown (stationary fleet)"
                                                  : "birth: each part from the start of the run";
    }
    classes.push_back(j);
    estimates.push_back(std::move(e));
  }
  // Which classes leave the exponential: over all of them at once (Holm), and only where the data
  // pin the fit down (shape_choice.hpp).
  std::vector<std::optional<WeibullFit>> fits;
  std::vector<bool> from_birth;
  for (const auto& e : estimates) fits.push_back(e.lifetimes), from_birth.push_back(!e.from_midlife);
  const std::vector<ShapeChoice> choices = choose_shapes(fits, from_birth, options.confidence);
  for (std::size_t i = 0; i < estimates.size(); ++i) {
    ClassEstimate& e = estimates[i];
    if (!e.lifetimes) continue;
    nlohmann::ordered_json& j = classes[i];
    const ShapeChoice& choice = choices[i];
    const Interval observed = e.rate_per_hour;
    e.shape_trusted = choice.weibull;
    j["shape_choice"] = {{"distribution", choice.weibull ? "weibull" : "exponential"}, {"reason", choice.reason},
                         {"identifiable", choice.identifiable}, {"aic_gain", choice.aic_gain}};
    if (choice.tested) j["shape_choice"]["holm_level"] = choice.holm_level;
    j["rate_observed_per_" + e.component + "_year"] = interval_json(observed, kHoursPerYear);
    // Lives from birth with a hazard that is not flat: count / exposure over a window is not
    // 1 / mean life, which is what a scenario's rate means; take the rate from the fitted mean,
    // and say so: over the window it gives the counts seen, beyond it it extrapolates the fit. A
    // fleet in mid-life is stationary: count / exposure is its rate.
    if (e.shape_trusted && !e.from_midlife) {
      const Interval& m = e.lifetimes->mean_life;
      e.rate_per_hour = {1 / m.estimate, 1 / m.upper, 1 / m.lower};
      j["rate_per_" + e.component + "_year"] = interval_json(e.rate_per_hour, kHoursPerYear);
      j["rate_from"] = "the Weibull mean life (shape 1 rejected, lives from birth)";
      j["warning"] = "the rate written, " + number(e.rate_per_hour.estimate * kHoursPerYear) + "/" + e.component +
                     "-year, is the Weibull mean life's, not the " + number(observed.estimate * kHoursPerYear) +
                     " observed over the window; a forecast past the window extrapolates the fitted shape";
    } else {
      j["rate_from"] = "count / exposure (exact Poisson interval)";
      if (e.shape_trusted)
        j["warning"] = "the shape is fitted on a window of the fleet's life; a forecast past the window extrapolates it";
    }
  }
  add_trend_tests(evidence, options, estimates, classes, report);
  report["classes"] = classes;
  return estimates;
}

//! What the fleet as a whole shows: step times, repair and recovery durations, the job's
//! interruptions, job MTTF against size, and lemons.
struct FleetFits {
  std::optional<StepTimeFit> steps;
  std::optional<LognormalFit> repair, recovery;
};

FleetFits fit_fleet(const Evidence& evidence, const CalibrateOptions& options, nlohmann::ordered_json& report) {
  FleetFits fits;
  std::optional<StepTimeFit>& steps = fits.steps;
  if (!evidence.steps.empty()) {
    steps = fit_step_times(evidence.steps, options.confidence);
    report["step_times"] = step_times_json(*steps, options.confidence);
  }

  std::optional<LognormalFit>& repair = fits.repair;
  std::optional<LognormalFit>& recovery = fits.recovery;
  if (evidence.repair_hours.size() >= 2) {
    repair = fit_lognormal(evidence.repair_hours, options.confidence);
    report["repair_hours"] = {{"n", repair->n}, {"median", repair->median}, {"mean", repair->mean},
                              {"log_mu", interval_json(repair->mu)}, {"log_sigma", interval_json(repair->sigma)}};
    report["repair_hours"]["cdf"] = duration_cdf_json(evidence.repair_hours, *repair);
  }
  if (evidence.recovery_hours.size() >= 2) {
    recovery = fit_lognormal(evidence.recovery_hours, options.confidence);
    report["recovery_hours"] = {{"n", recovery->n}, {"median", recovery->median}, {"mean", recovery->mean},
                                {"log_mu", interval_json(recovery->mu)}, {"log_sigma", interval_json(recovery->sigma)}};
    report["recovery_hours"]["cdf"] = duration_cdf_json(evidence.recovery_hours, *recovery);
  }
  if (std::count_if(evidence.job_lives.begin(), evidence.job_lives.end(), [](const Life& l) { return l.failed; }) >= 2) {
    const WeibullFit job = fit_weibull(evidence.job_lives, options.confidence);
    report["job_interruptions"] = {{"interruptions", job.failures},
                                   {"mttf_hours", job.exponential_scale},
                                   {"weibull_shape", interval_json(job.shape)},
                                   {"shape_one_p_value", job.shape_one_p_value}};
  }
  if (!evidence.jobs.empty()) {
    std::vector<JobExposure> jobs;
    for (const SlurmJob& j : evidence.jobs) jobs.push_back({static_cast<double>(j.nodes), (j.end_s - j.start_s) / 3600, j.failed() ? 1 : 0});
    const MttfScaling s = fit_mttf_scaling(jobs, options.confidence);
    report["job_mttf_vs_size"] = {{"jobs", s.jobs}, {"failures", s.failures},
                                  {"exponent", std::isnan(s.exponent.estimate) ? nlohmann::ordered_json() : interval_json(s.exponent)},
                                  {"exponent_one_p_value", s.exponent_one_p_value},
                                  {"per_node_rate_per_year", interval_json(s.per_node_rate, kHoursPerYear)},
                                  {"law", "job MTTF = 1 / (nodes x per-node rate) when the exponent is 1"}};
  }
  std::vector<NodeCount> nodes;
  for (const auto& [name, n] : evidence.nodes) nodes.push_back(n);
  nlohmann::ordered_json lemons = nlohmann::ordered_json::array();
  for (const Lemon& l : find_lemons(nodes))
    lemons.push_back({{"node", l.node}, {"faults", l.count}, {"expected", l.expected}, {"p_value", l.p_value}});
  report["lemons"] = lemons;

  return fits;
}

}  // namespace

CalibrationResult calibrate(const std::vector<std::string>& traces, const CalibrateOptions& options) {
  std::optional<Scenario> base;
  if (options.base) base = load_scenario(*options.base);
  const Evidence evidence = read_traces(traces, base, options);

  CalibrationResult out;
  nlohmann::ordered_json& report = out.report;
  report["schema_version"] = 1;
  report["ctwin_version"] = kCtwinVersion;
  report["command"] = "calibrate";
  report["confidence"] = options.confidence;
  report["traces"] = evidence.traces;
  const std::vector<ClassEstimate> estimates = fit_classes(evidence, options, report);
  const FleetFits fits = fit_fleet(evidence, options, report);
  const std::optional<StepTimeFit>& steps = fits.steps;

  // The scenario: the base (or a skeleton) with each class's rate replaced by the fit.
  nlohmann::ordered_json doc = base_document(options, evidence);
  const nlohmann::ordered_json added = apply_class_fits(doc, estimates, options);
  apply_repairs(doc, fits.repair);
  apply_measured_restarts(doc, evidence, report);
  apply_row_remaps(doc, evidence, options, report);
  doc["calibration"] = {{"traces", traces}, {"confidence", options.confidence}, {"classes_added", added},
                        {"report", "see the calibration report for every fit"}};
  const bool grouped = base && std::any_of(base->faults.begin(), base->faults.end(), [](const FaultClass& f) { return f.group.has_value(); });
  if (grouped && options.prior) apply_population_prior(doc, *base, estimates, PopulationPrior::read(*options.prior), *options.prior, report);
  // How long the traces lasted, end to end: a forecast past it extrapolates the rates (and says so).
  if (!evidence.fleet.clocks_mixed && !evidence.fleet.windows.empty()) {
    double first = evidence.fleet.windows.front().first, last = evidence.fleet.windows.front().second;
    for (const auto& [a, b] : evidence.fleet.windows) first = std::min(first, a), last = std::max(last, b);
    // (A window past the longest duration a scenario holds says nothing a forecast could use.)
    if (last > first && last - first <= kLongestSeconds) doc["calibration"]["window"] = number((last - first) / 3600) + "h";
  }
  // A failure-free step is the logs' median (slow steps are the tail). With a workload the step
  // model computes it, and the logs are for checking that instead.
  if (steps) apply_slow_nodes(doc, *steps, evidence.step_sources, options, report);
  if (steps && !doc.contains("workload")) {
    doc["job"]["step_time"] = number(steps->median_s) + "s";
    doc["job"].erase("tokens_per_s");  // the measured step replaces a throughput figure
    doc["calibration"]["step_time"] = {{"median_s", steps->median_s}, {"records", steps->records}, {"provenance", evidence.step_sources}};
  }
  out.scenario = doc;
  try {
    parse_scenario(doc.dump(), "the calibrated scenario");  // never write a scenario that does not load
  } catch (const ScenarioInvalid& e) {
    // Rates a trial cannot hold (many faults over a few seconds of exposure: a fuzzer's trace of
    // instants) are the traces' doing: bad input. Anything else that does not load is this
    // program's fault.
    const auto& problems = e.problems();
    auto ends_with = [](const std::string& text, std::string_view tail) {
      return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
    };
    // The numbers calibrate writes from the traces: the rates, the step time, the repairs.
    auto from_traces = [&](const ScenarioProblem& p) {
      return (p.pointer.rfind("/faults/", 0) == 0 && ends_with(p.pointer, "/rate")) || p.pointer == "/job/step_time" ||
             p.pointer.rfind("/spares/repair", 0) == 0;
    };
    if (std::all_of(problems.begin(), problems.end(), from_traces)) {
      std::string files;
      for (const auto& t : traces) files += (files.empty() ? "" : ", ") + t;
      const ScenarioProblem& first = problems.front();
      throw TraceUnreadable(files + ": the traces give a scenario no forecast can simulate (" + first.pointer + " " + first.reason +
                            (ends_with(first.pointer, "/rate") ? ": too many faults over too little exposure" : "") + ")");
    }
    throw std::logic_error(std::string("internal error: calibration produced a scenario that does not load: ") + e.what());
  }
  return out;
}

}  // namespace ctwin::calib
