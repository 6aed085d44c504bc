#include "calibration/estimators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <numeric>

#include <Eigen/Dense>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/poisson.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/minima.hpp>
#include <boost/math/tools/roots.hpp>

namespace ctwin::calib {

namespace {

//! Where the shape is searched: a fit at either end is not an estimate (shape_at_bound).
constexpr double kBirthShapeRange[2] = {1e-3, 100.0};
constexpr double kMidlifeShapeRange[2] = {0.05, 20.0};

double z_of(double confidence) {
  return boost::math::quantile(boost::math::normal_distribution<double>(), 0.5 + confidence / 2);
}

//! Log-likelihood of right-censored Weibull data at shape k and scale lambda. A life from mid-life
//! is a forward recurrence time: density S(t) / mean, survival Q(1/k, (t/lambda)^k).
//! Double precision throughout: Boost's default promotes to long double, ten times slower, for
//! digits a likelihood maximisation does not use.
using DoublePolicy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;

double life_log_likelihood(const Life& l, double k, double lambda) {
  const double x = l.time / lambda;
  const double xk = std::pow(x, k);
  if (!l.from_midlife) return (l.failed ? std::log(k / lambda) + (k - 1) * std::log(x) : 0.0) - xk;
  if (l.failed) return -xk - std::log(lambda) - std::lgamma(1 + 1 / k);
  const double q = boost::math::gamma_q(1 / k, xk, DoublePolicy());
  // Far in the tail Q underflows: its asymptote, log Q(a, x) ~ -x + (a - 1) log x - log Gamma(a).
  return q > 1e-300 ? std::log(q) : -xk + (1 / k - 1) * std::log(xk) - std::lgamma(1 / k);
}

double weibull_log_likelihood(const std::vector<Life>& lives, double k, double lambda) {
  double sum = 0;
  for (const Life& l : lives) sum += life_log_likelihood(l, k, lambda);
  return sum;
}

//! The maximum-likelihood (k, lambda) when some lives are observed from mid-life: no closed form,
//! so lambda is profiled out by a bracketed minimisation for each k, and k by another. Lives with
//! the same time and kind are one term with a weight (a fleet's censored GPUs share a window).
std::pair<double, double> fit_from_midlife(const std::vector<Life>& lives) {
  std::map<std::tuple<double, bool, bool>, double> weights;
  for (const Life& l : lives) weights[{l.time, l.failed, l.from_midlife}] += 1;
  std::vector<std::pair<Life, double>> terms;
  for (const auto& [key, w] : weights) terms.push_back({{std::get<0>(key), std::get<1>(key), std::get<2>(key)}, w});
  auto log_likelihood = [&](double k, double lambda) {
    double sum = 0;
    for (const auto& [life, w] : terms) sum += w * life_log_likelihood(life, k, lambda);
    return sum;
  };
  constexpr int kBits = 14;  // about 1e-4 of relative precision in k and lambda: far inside their intervals
  auto best_log_lambda = [&](double k) {
    // Times are scaled to at most 1: the mean life lies within e^-25 .. e^25 of them.
    return boost::math::tools::brent_find_minima([&](double b) { return -log_likelihood(k, std::exp(b)); }, -25.0, 25.0, kBits).first;
  };
  const double log_k = boost::math::tools::brent_find_minima(
                           [&](double a) { return -log_likelihood(std::exp(a), std::exp(best_log_lambda(std::exp(a)))); },
                           std::log(kMidlifeShapeRange[0]), std::log(kMidlifeShapeRange[1]), kBits)
                           .first;
  const double k = std::exp(log_k);
  return {k, std::exp(best_log_lambda(k))};
}

}  // namespace

Interval poisson_rate(double count, double exposure, double confidence) {
  const double alpha = 1 - confidence;
  Interval r;
  if (exposure <= 0) return r;
  r.estimate = count / exposure;
  r.lower = count > 0 ? boost::math::quantile(boost::math::chi_squared_distribution<double>(2 * count), alpha / 2) / (2 * exposure) : 0;
  r.upper = boost::math::quantile(boost::math::chi_squared_distribution<double>(2 * count + 2), 1 - alpha / 2) / (2 * exposure);
  return r;
}

WeibullFit fit_weibull(const std::vector<Life>& given, double confidence) {
  WeibullFit fit;
  std::vector<Life> lives;
  double longest = 0;
  for (const Life& l : given)
    if (l.time > 0) {
      lives.push_back(l);
      longest = std::max(longest, l.time);
    }
  for (const Life& l : lives) (l.failed ? fit.failures : fit.censored)++;
  if (fit.failures < 2) return fit;
  for (Life& l : lives) l.time /= longest;  // scale-free: no overflow in t^k
  const double r = fit.failures;
  double sum_log_failed = 0;
  for (const Life& l : lives)
    if (l.failed) sum_log_failed += std::log(l.time);
  // The profile score in k is decreasing: r/k + sum(log t | failed) - r sum(t^k log t) / sum(t^k).
  auto score = [&](double k) {
    double a = 0, b = 0;
    for (const Life& l : lives) {
      const double p = std::pow(l.time, k);
      a += p * std::log(l.time);
      b += p;
    }
    return r / k + sum_log_failed - r * a / b;
  };
  double k = 1, lambda = 1;
  if (std::none_of(lives.begin(), lives.end(), [](const Life& l) { return l.from_midlife; })) {
    // Lives from birth: lambda has a closed form given k, and the profile score is monotone in k.
    boost::math::tools::eps_tolerance<double> tolerance(50);
    std::uintmax_t iterations = 200;
    if (score(kBirthShapeRange[0]) <= 0 || score(kBirthShapeRange[1]) >= 0) {  // no root inside: the fit is at a bound
      k = score(kBirthShapeRange[0]) <= 0 ? kBirthShapeRange[0] : kBirthShapeRange[1];
    } else {
      const auto [k_lo, k_hi] = boost::math::tools::toms748_solve(score, kBirthShapeRange[0], kBirthShapeRange[1], score(kBirthShapeRange[0]),
                                                                  score(kBirthShapeRange[1]), tolerance, iterations);
      k = (k_lo + k_hi) / 2;
    }
    fit.shape_at_bound = k <= kBirthShapeRange[0] * 1.01 || k >= kBirthShapeRange[1] / 1.01;
    double sum_pow = 0;
    for (const Life& l : lives) sum_pow += std::pow(l.time, k);
    lambda = std::pow(sum_pow / r, 1 / k);
  } else {
    std::tie(k, lambda) = fit_from_midlife(lives);
    fit.shape_at_bound = k <= kMidlifeShapeRange[0] * 1.01 || k >= kMidlifeShapeRange[1] / 1.01;
  }
  fit.log_likelihood = weibull_log_likelihood(lives, k, lambda);
  // Observed information on (log k, log lambda), by central differences.
  const double h = 1e-4;
  auto ll = [&](double a, double b) { return weibull_log_likelihood(lives, std::exp(a), std::exp(b)); };
  const double a0 = std::log(k), b0 = std::log(lambda);
  Eigen::Matrix2d info;
  info(0, 0) = -(ll(a0 + h, b0) - 2 * ll(a0, b0) + ll(a0 - h, b0)) / (h * h);
  info(1, 1) = -(ll(a0, b0 + h) - 2 * ll(a0, b0) + ll(a0, b0 - h)) / (h * h);
  info(0, 1) = info(1, 0) = -(ll(a0 + h, b0 + h) - ll(a0 + h, b0 - h) - ll(a0 - h, b0 + h) + ll(a0 - h, b0 - h)) / (4 * h * h);
  const Eigen::Matrix2d cov = info.inverse();
  const double z = z_of(confidence);
  const double se_a = std::sqrt(std::max(0.0, cov(0, 0))), se_b = std::sqrt(std::max(0.0, cov(1, 1)));
  fit.shape = {k, std::exp(a0 - z * se_a), std::exp(a0 + z * se_a)};
  fit.scale = {lambda * longest, std::exp(b0 - z * se_b) * longest, std::exp(b0 + z * se_b) * longest};
  // log mean = log lambda + log Gamma(1 + 1/k): its gradient in (log k, log lambda) is (-psi(1 + 1/k) / k, 1).
  const Eigen::Vector2d gradient(-boost::math::digamma(1 + 1 / k) / k, 1.0);
  const double se_mean = std::sqrt(std::max(0.0, gradient.dot(cov * gradient)));
  const double log_mean = b0 + std::lgamma(1 + 1 / k);
  fit.mean_life = {std::exp(log_mean) * longest, std::exp(log_mean - z * se_mean) * longest, std::exp(log_mean + z * se_mean) * longest};
  // Likelihood ratio against the exponential (shape 1), whose MLE is the total time over failures.
  double total = 0;
  for (const Life& l : lives) total += l.time;
  const double exponential = total / r;
  const double lr = std::max(0.0, 2 * (fit.log_likelihood - weibull_log_likelihood(lives, 1.0, exponential)));
  fit.exponential_scale = exponential * longest;
  fit.likelihood_ratio = lr;
  fit.shape_one_p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(1), lr));
  // Report the likelihood in the original time unit: each failure's density carries 1/longest.
  fit.log_likelihood -= r * std::log(longest);
  return fit;
}

std::optional<TrendTest> laplace_trend(const std::vector<double>& times, const std::vector<std::pair<double, double>>& windows) {
  // E(t) = sum over windows of the part before t: t (#starts before t - #ends before t) - (sum of
  // those starts - sum of those ends), from sorted starts and ends with prefix sums.
  std::vector<double> starts, ends;
  for (const auto& [a, b] : windows)
    if (b > a) starts.push_back(a), ends.push_back(b);
  if (starts.empty()) return std::nullopt;
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  std::vector<double> start_sums(starts.size() + 1, 0), end_sums(ends.size() + 1, 0);
  for (std::size_t i = 0; i < starts.size(); ++i) start_sums[i + 1] = start_sums[i] + starts[i];
  for (std::size_t i = 0; i < ends.size(); ++i) end_sums[i + 1] = end_sums[i] + ends[i];
  auto exposure_until = [&](double t) {
    const auto a = static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), t) - starts.begin());
    const auto b = static_cast<std::size_t>(std::lower_bound(ends.begin(), ends.end(), t) - ends.begin());
    return t * static_cast<double>(a) - start_sums[a] - (t * static_cast<double>(b) - end_sums[b]);
  };
  const double total = exposure_until(ends.back());
  if (total <= 0) return std::nullopt;
  TrendTest test;
  double sum = 0;
  for (const double t : times)
    if (t >= starts.front() && t <= ends.back()) sum += exposure_until(t) / total, ++test.events;
  if (test.events < 5) return std::nullopt;
  const double n = test.events;
  test.statistic = (sum / n - 0.5) * std::sqrt(12 * n);
  if (!std::isfinite(test.statistic)) return std::nullopt;  // clocks beyond double's precision
  test.p_value = 2 * boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), std::abs(test.statistic)));
  return test;
}

std::optional<PowerLawFit> fit_power_law(const std::vector<double>& times, const std::vector<std::pair<double, double>>& windows,
                                         double parts_per_window) {
  double first = std::numeric_limits<double>::infinity(), last = -first;
  for (const auto& [a, b] : windows)
    if (b > a) first = std::min(first, a), last = std::max(last, b);
  if (!(last > first) || !std::isfinite(last - first)) return std::nullopt;
  PowerLawFit fit;
  fit.age = last - first;
  // In units of the span, from the first start: every power stays within [0, 1].
  std::vector<std::pair<double, double>> spans;
  double exposure = 0;
  for (const auto& [a, b] : windows)
    if (b > a) spans.emplace_back((a - first) / fit.age, (b - first) / fit.age), exposure += (b - a) / fit.age;
  double sum_logs = 0;
  for (const double t : times)
    if (t >= first && t <= last) sum_logs += std::log(std::max((t - first) / fit.age, 1e-9)), ++fit.events;
  if (fit.events < 5) return std::nullopt;
  const double n = fit.events;
  auto spread = [&](double b) {  // sum over windows of e^b - s^b
    double s = 0;
    for (const auto& [a, e] : spans) s += std::pow(e, b) - std::pow(a, b);
    return s;
  };
  auto log_likelihood = [&](double log_b) {  // with l = n / spread(b) put in
    const double b = std::exp(log_b);
    return n * log_b - n * std::log(spread(b)) + (b - 1) * sum_logs;
  };
  double lo = std::log(0.1), hi = std::log(10.0);
  const double golden = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
  double f1 = log_likelihood(x1), f2 = log_likelihood(x2);
  for (int i = 0; i < 100 && hi - lo > 1e-9; ++i) {
    if (f1 < f2) lo = x1, x1 = x2, f1 = f2, x2 = lo + golden * (hi - lo), f2 = log_likelihood(x2);
    else hi = x2, x2 = x1, f2 = f1, x1 = hi - golden * (hi - lo), f1 = log_likelihood(x1);
  }
  fit.shape = std::exp((lo + hi) / 2);
  // In hours and per part: l_h = n / (m A^b spread), so log L gains n (log n - log m - log A_h - 1).
  fit.log_likelihood = log_likelihood(std::log(fit.shape)) + n * (std::log(n) - std::log(parts_per_window) - std::log(fit.age / 3600) - 1);
  // u(1) = l b with l = n / spread(b); the constant model's rate is n / exposure.
  fit.end_factor = fit.shape * exposure / spread(fit.shape);
  if (!std::isfinite(fit.end_factor) || !std::isfinite(fit.shape)) return std::nullopt;
  return fit;
}

LognormalFit fit_lognormal(const std::vector<double>& durations, double confidence) {
  LognormalFit fit;
  std::vector<double> logs;
  for (double d : durations)
    if (d > 0) logs.push_back(std::log(d));
  fit.n = static_cast<int>(logs.size());
  if (fit.n < 2) return fit;
  const double n = fit.n;
  const double mu = std::accumulate(logs.begin(), logs.end(), 0.0) / n;
  double ss = 0;
  for (double x : logs) ss += (x - mu) * (x - mu);
  const double s = std::sqrt(ss / (n - 1));
  const double alpha = 1 - confidence;
  const double t = boost::math::quantile(boost::math::students_t_distribution<double>(n - 1), 1 - alpha / 2);
  fit.mu = {mu, mu - t * s / std::sqrt(n), mu + t * s / std::sqrt(n)};
  const boost::math::chi_squared_distribution<double> chi(n - 1);
  fit.sigma = {s, std::sqrt(ss / boost::math::quantile(chi, 1 - alpha / 2)), std::sqrt(ss / boost::math::quantile(chi, alpha / 2))};
  fit.median = std::exp(mu);
  fit.mean = std::exp(mu + s * s / 2);
  return fit;
}

MttfScaling fit_mttf_scaling(const std::vector<JobExposure>& jobs, double confidence) {
  MttfScaling fit;
  double failures = 0, node_hours = 0;
  std::vector<const JobExposure*> used;
  for (const JobExposure& j : jobs)
    if (j.hours > 0 && j.nodes > 0) {
      used.push_back(&j);
      failures += j.failures;
      node_hours += j.nodes * j.hours;
    }
  fit.jobs = static_cast<int>(used.size());
  fit.failures = static_cast<int>(failures);
  fit.per_node_rate = poisson_rate(failures, node_hours, confidence);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  fit.exponent = {nan, nan, nan};
  const auto [lo, hi] = std::minmax_element(used.begin(), used.end(), [](auto* a, auto* b) { return a->nodes < b->nodes; });
  if (used.empty() || failures < 2 || (*lo)->nodes == (*hi)->nodes) return fit;  // no spread in size: no exponent
  // Poisson regression, log mu = log T + c + b log N, by iteratively reweighted least squares.
  const Eigen::Index n = static_cast<Eigen::Index>(used.size());
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n), offset(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = 1;
    x(i, 1) = std::log(used[static_cast<std::size_t>(i)]->nodes);
    y(i) = used[static_cast<std::size_t>(i)]->failures;
    offset(i) = std::log(used[static_cast<std::size_t>(i)]->hours);
  }
  Eigen::Vector2d beta(std::log(failures / node_hours), 1.0);
  Eigen::Matrix2d information = Eigen::Matrix2d::Identity();
  for (int iteration = 0; iteration < 100; ++iteration) {
    const Eigen::VectorXd eta = x * beta + offset;
    const Eigen::VectorXd mu = eta.array().exp();
    const Eigen::VectorXd z = (eta - offset).array() + (y - mu).array() / mu.array();
    information = x.transpose() * mu.asDiagonal() * x;
    const Eigen::Vector2d next = information.ldlt().solve(x.transpose() * mu.asDiagonal() * z);
    const bool converged = (next - beta).cwiseAbs().maxCoeff() < 1e-10;
    beta = next;
    if (converged) break;
  }
  const double se = std::sqrt(information.inverse()(1, 1));
  // A regression that diverged (sizes and failures no Poisson law fits: a fuzzer's jobs) has no exponent.
  if (!std::isfinite(beta(1)) || !std::isfinite(se) || se <= 0) return fit;
  const double z = z_of(confidence);
  fit.exponent = {beta(1), beta(1) - z * se, beta(1) + z * se};
  fit.exponent_one_p_value =
      2 * boost::math::cdf(boost::math::complement(boost::math::normal_distribution<double>(), std::abs(beta(1) - 1) / se));
  return fit;
}

std::vector<Lemon> find_lemons(const std::vector<NodeCount>& nodes, double alpha) {
  double count = 0, exposure = 0;
  for (const NodeCount& n : nodes) {
    count += n.count;
    exposure += n.exposure;
  }
  std::vector<Lemon> lemons;
  if (nodes.empty() || exposure <= 0 || count <= 0) return lemons;
  const double rate = count / exposure;
  for (const NodeCount& n : nodes) {
    const double expected = rate * n.exposure;
    if (n.count < 1 || expected <= 0) continue;
    const double p = boost::math::cdf(boost::math::complement(boost::math::poisson_distribution<double>(expected), n.count - 1));
    if (p < alpha / static_cast<double>(nodes.size())) lemons.push_back({n.node, n.count, expected, p});
  }
  std::sort(lemons.begin(), lemons.end(), [](const Lemon& a, const Lemon& b) { return a.p_value < b.p_value; });
  return lemons;
}

std::vector<CdfPoint> empirical_cdf(std::vector<Life> lives, std::size_t points) {
  // Failures before censorings at equal times: a life censored at t was still at risk at t.
  std::sort(lives.begin(), lives.end(), [](const Life& a, const Life& b) { return a.time != b.time ? a.time < b.time : a.failed > b.failed; });
  std::vector<CdfPoint> steps;
  double survival = 1;
  auto at_risk = static_cast<double>(lives.size());
  for (std::size_t i = 0; i < lives.size();) {
    std::size_t j = i;
    double failed = 0;
    for (; j < lives.size() && lives[j].time == lives[i].time; ++j) failed += lives[j].failed ? 1 : 0;
    if (failed > 0) {
      survival *= 1 - failed / at_risk;
      steps.push_back({lives[i].time, 1 - survival});
    }
    at_risk -= static_cast<double>(j - i);
    i = j;
  }
  if (steps.size() <= points || points < 2) return steps;
  std::vector<CdfPoint> thinned;
  for (std::size_t k = 0; k < points; ++k) thinned.push_back(steps[k * (steps.size() - 1) / (points - 1)]);
  return thinned;
}

}  // namespace ctwin::calib
