#include "sim/experiments.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <Eigen/Dense>
#include <boost/math/distributions/students_t.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "core/rng.hpp"
#include "models/scenario_loader.hpp"
#include "models/json_document.hpp"
#include "policies/checkpoint_policy.hpp"
#include "core/ranks.hpp"
#include "sim/step_cache.hpp"
#include "trial/trial_config.hpp"

namespace ctwin {

nlohmann::json parse_setting_value(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return text;  // "10min", "rail_optimized": strings
  }
}

nlohmann::json read_scenario_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioInvalid(path, {{"", "cannot open the file"}});
  std::ostringstream text;
  text << in.rdbuf();
  return parse_json_document(text.str(), path);
}

Scenario scenario_variant(const nlohmann::json& document, const std::string& file, const std::vector<Setting>& settings) {
  nlohmann::json doc = document;
  for (const auto& s : settings) {
    try {
      doc[nlohmann::json::json_pointer(s.pointer)] = s.value;
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioInvalid(file, {{s.pointer, std::string("cannot set this field: ") + e.what()}});
    }
  }
  Scenario scenario = parse_scenario(doc.dump(), file);
  resolve_step_time(scenario, file);
  return scenario;
}

std::vector<double> spread_goodputs(const Scenario& scenario, const RunOptions& options) {
  const Ranks& ranks = Ranks::world();
  const Ranks::Slice slice = ranks.slice(options.trials);
  RunOptions mine = options;
  mine.first_trial = options.first_trial + slice.first;
  mine.trials = slice.count;
  mine.keep_trials = false;  // only each trial's goodput, for the pairing
  mine.keep_goodputs = true;
  return ranks.gather(run_trials(scenario, mine).tally.goodputs(), options.trials);
}

std::vector<VariantResult> run_variants(const nlohmann::json& document, const std::string& file,
                                        const std::vector<std::vector<Setting>>& variants, const RunOptions& options,
                                        const Progress& progress) {
  // Validate every variant before running any: a bad value costs nothing.
  std::vector<Scenario> scenarios;
  for (const auto& v : variants) scenarios.push_back(scenario_variant(document, file, v));
  std::vector<VariantResult> out;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    VariantResult r;
    r.settings = variants[i];
    r.goodput = spread_goodputs(scenarios[i], options);
    r.summary = summarize(r.goodput);
    out.push_back(std::move(r));
    if (progress) progress(i + 1, variants.size());
  }
  return out;
}

namespace {

//! Peak of a quadratic in log(interval) through the points around the best one; nullopt if the
//! fit is not a peak or the peak lies outside the points fitted.
std::optional<double> fitted_peak(const std::vector<double>& interval_s, const std::vector<double>& mean) {
  const auto best = static_cast<std::size_t>(std::max_element(mean.begin(), mean.end()) - mean.begin());
  const std::size_t half = 4;
  const std::size_t lo = best >= half ? best - half : 0;
  const std::size_t hi = std::min(mean.size() - 1, best + half);
  if (hi - lo < 2) return std::nullopt;
  const auto n = static_cast<Eigen::Index>(hi - lo + 1);
  Eigen::MatrixXd design(n, 3);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double x = std::log(interval_s[lo + static_cast<std::size_t>(i)]);
    design(i, 0) = 1;
    design(i, 1) = x;
    design(i, 2) = x * x;
    y(i) = mean[lo + static_cast<std::size_t>(i)];
  }
  const Eigen::Vector3d c = design.colPivHouseholderQr().solve(y);
  if (!(c(2) < 0)) return std::nullopt;
  const double peak = std::exp(-c(1) / (2 * c(2)));
  if (peak < interval_s[lo] || peak > interval_s[hi]) return std::nullopt;
  return peak;
}

std::vector<double> means_over(const std::vector<std::vector<double>>& per_point, const std::vector<std::size_t>& trials) {
  std::vector<double> means;
  for (const auto& g : per_point) {
    double sum = 0;
    for (std::size_t t : trials) sum += g[t];
    means.push_back(sum / static_cast<double>(trials.size()));
  }
  return means;
}

}  // namespace

OptimizeResult optimize_interval(const nlohmann::json& document, const std::string& file, const OptimizeOptions& options,
                                 const Progress& progress) {
  const Scenario base = scenario_variant(document, file, {});
  double from = options.from_s, to = options.to_s;
  if (from <= 0 || to <= 0) {
    // Only to place the grid: a wide bracket around Young's value for the implied MTBF.
    const CheckpointCosts costs = resolve_checkpoint_costs(base);
    const double young = young_interval_s(std::max(1e-3, micros_to_seconds(costs.save_us)), implied_job_mtbf_s(base));
    from = from > 0 ? from : young / 6;
    to = to > 0 ? to : young * 6;
  }
  OptimizeResult out;
  for (int i = 0; i < options.points; ++i)
    out.interval_s.push_back(from * std::pow(to / from, static_cast<double>(i) / std::max(1, options.points - 1)));
  auto variant = [](double interval_s) {
    return std::vector<Setting>{{"/policies/checkpoint", {{"type", "fixed"}, {"interval", std::to_string(interval_s) + "s"}}}};
  };
  std::vector<std::vector<Setting>> variants;
  for (double t : out.interval_s) variants.push_back(variant(t));
  variants.push_back({});  // the scenario as it is, last: what each interval is paired against

  // Adaptive replications: double the trials until the best point's CI is narrow enough.
  int trials = options.trials;
  std::vector<VariantResult> results;
  VariantResult given;
  while (true) {
    RunOptions run;
    run.trials = trials;
    run.seed = options.seed;
    run.jobs = options.jobs;
    run.rate_uncertainty = options.rate_uncertainty;
    results = run_variants(document, file, variants, run, progress);
    given = std::move(results.back());
    results.pop_back();
    const auto best = std::max_element(results.begin(), results.end(),
                                       [](const auto& a, const auto& b) { return a.summary.mean < b.summary.mean; });
    const double half = (best->summary.ci95_high - best->summary.ci95_low) / 2;
    if (options.ci_target <= 0 || half <= options.ci_target || trials * 2 > options.max_trials) break;
    trials *= 2;
  }
  out.trials = trials;
  std::vector<std::vector<double>> per_point;
  std::vector<double> means;
  out.given = given.summary;
  for (const auto& r : results) {
    out.goodput.push_back(r.summary);
    out.vs_given.push_back(paired_difference(r.goodput, given.goodput).paired);
    per_point.push_back(r.goodput);
    means.push_back(r.summary.mean);
  }
  const auto best_index = static_cast<std::size_t>(std::max_element(means.begin(), means.end()) - means.begin());
  const auto peak = fitted_peak(out.interval_s, means);
  out.fitted = peak.has_value();
  out.best_interval_s = peak.value_or(out.interval_s[best_index]);

  // Bootstrap over trials (the same resample at every grid point keeps the pairing).
  Rng rng(splitmix64(options.seed ^ 0xB0075742ULL));
  boost::random::uniform_int_distribution<std::size_t> pick(0, static_cast<std::size_t>(trials) - 1);
  std::vector<double> peaks;
  for (int b = 0; b < options.bootstrap; ++b) {
    std::vector<std::size_t> sample(static_cast<std::size_t>(trials));
    for (auto& s : sample) s = pick(rng);
    const std::vector<double> m = means_over(per_point, sample);
    const auto p = fitted_peak(out.interval_s, m);
    peaks.push_back(p.value_or(out.interval_s[static_cast<std::size_t>(std::max_element(m.begin(), m.end()) - m.begin())]));
  }
  std::sort(peaks.begin(), peaks.end());
  out.best_ci_low_s = peaks.empty() ? out.best_interval_s : peaks[peaks.size() * 25 / 1000];
  out.best_ci_high_s = peaks.empty() ? out.best_interval_s : peaks[std::min(peaks.size() - 1, peaks.size() * 975 / 1000)];

  RunOptions at_best;
  at_best.trials = trials;
  at_best.seed = options.seed;
  at_best.jobs = options.jobs;
  at_best.rate_uncertainty = options.rate_uncertainty;
  const std::vector<double> at_best_goodputs = spread_goodputs(scenario_variant(document, file, variant(out.best_interval_s)), at_best);
  out.best_goodput = summarize(at_best_goodputs);
  out.best_vs_given = paired_difference(at_best_goodputs, given.goodput).paired;
  return out;
}

PairedDifference paired_difference(const std::vector<double>& variant, const std::vector<double>& baseline) {
  PairedDifference d;
  std::vector<double> diff;
  for (std::size_t i = 0; i < std::min(variant.size(), baseline.size()); ++i) diff.push_back(variant[i] - baseline[i]);
  d.paired = summarize(diff);
  const Summary a = summarize(variant), b = summarize(baseline);
  d.unpaired = d.paired;
  const double va = a.stddev * a.stddev / static_cast<double>(a.n), vb = b.stddev * b.stddev / static_cast<double>(b.n);
  const double se = std::sqrt(va + vb);
  const double dof = (va + vb) * (va + vb) /
                     (va * va / std::max<double>(1, static_cast<double>(a.n) - 1) + vb * vb / std::max<double>(1, static_cast<double>(b.n) - 1));
  const double q = se > 0 && dof > 0 ? boost::math::quantile(boost::math::students_t(dof), 0.975) : 0;
  d.unpaired.mean = a.mean - b.mean;
  d.unpaired.ci95_low = d.unpaired.mean - q * se;
  d.unpaired.ci95_high = d.unpaired.mean + q * se;
  return d;
}

ChoiceResult choose_policy(const nlohmann::json& document, const std::string& file,
                           const std::vector<std::vector<Setting>>& combinations, const OptimizeOptions& options,
                           const Progress& progress) {
  ChoiceResult out;
  RunOptions run;
  run.trials = options.trials;
  run.seed = options.seed;
  run.jobs = options.jobs;
  run.rate_uncertainty = options.rate_uncertainty;
  while (true) {
    out.variants = run_variants(document, file, combinations, run, progress);
    std::vector<std::size_t> order(out.variants.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return out.variants[a].summary.mean > out.variants[b].summary.mean; });
    out.best = order[0];
    out.runner_up = order.size() > 1 ? order[1] : order[0];
    out.margin = paired_difference(out.variants[out.best].goodput, out.variants[out.runner_up].goodput);
    out.separated = order.size() == 1 || out.margin.paired.ci95_low > 0;
    out.trials = run.trials;
    if (out.separated || run.trials * 2 > options.max_trials) break;
    run.trials *= 2;
  }
  return out;
}

}  // namespace ctwin
