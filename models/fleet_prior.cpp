#include "models/fleet_prior.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <boost/math/special_functions/gamma.hpp>
#include <boost/random/chi_squared_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "core/rng.hpp"
#include "models/json_document.hpp"
#include "models/scenario_loader.hpp"

namespace ctwin {

namespace {

constexpr double kZ95 = 1.6448536269514722;  //!< the normal's 95th percentile
constexpr int kMaxDim = 1 + kClassGroups;
constexpr double kTDegrees = 5;  //!< the proposal's tails: heavier than the posterior's

using Vec = std::array<double, kMaxDim>;
using Mat = std::array<Vec, kMaxDim>;

//! Lower Cholesky factor of a positive definite `a` (its first n rows and columns); false if not.
bool cholesky(const Mat& a, int n, Mat& l) {
  l = Mat{};
  for (int i = 0; i < n; ++i)
    for (int j = 0; j <= i; ++j) {
      double sum = a[i][j];
      for (int k = 0; k < j; ++k) sum -= l[i][k] * l[j][k];
      if (i == j) {
        if (!(sum > 0)) return false;
        l[i][i] = std::sqrt(sum);
      } else {
        l[i][j] = sum / l[j][j];
      }
    }
  return true;
}

//! Solves l l^T x = b.
Vec cholesky_solve(const Mat& l, int n, Vec b) {
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= l[i][k] * b[k];
    b[i] /= l[i][i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) b[i] -= l[k][i] * b[k];
    b[i] /= l[i][i];
  }
  return b;
}

//! The fleet's latent log joint in one draw, over v = (u, e_g for each observed group): the normal
//! priors with their constants (they differ between draws) and the Poisson terms without theirs
//! (k log E - log k!, the same in every draw).
struct Joint {
  int n = 1;  //!< 1 + observed groups
  std::array<int, kClassGroups> group{};  //!< v[1 + i] is group group[i]'s e
  std::array<double, kClassGroups> base{}, count{}, exposure{};  //!< base: mu + covariate, per observed group
  double sigma_fleet = 1, sigma_group = 1;

  double mean(int i, const Vec& v) const { return exposure[i] * std::exp(std::min(base[i] + v[0] + v[1 + i], 700.0)); }
  double log_density(const Vec& v) const {
    constexpr double kHalfLog2Pi = 0.91893853320467274;
    double l = -0.5 * v[0] * v[0] / (sigma_fleet * sigma_fleet) - std::log(sigma_fleet) - kHalfLog2Pi;
    for (int i = 0; i + 1 < n; ++i) {
      const double e = v[1 + i];
      l += -0.5 * e * e / (sigma_group * sigma_group) - std::log(sigma_group) - kHalfLog2Pi;
      l += count[i] * (base[i] + v[0] + e) - mean(i, v);
    }
    return l;
  }
  //! Newton's method to the mode (the log joint is concave), and the negated Hessian there.
  Vec mode(Mat& precision) const {
    Vec v{};
    for (int iteration = 0; iteration < 100; ++iteration) {
      Vec gradient{};
      precision = Mat{};
      gradient[0] = -v[0] / (sigma_fleet * sigma_fleet);
      precision[0][0] = 1 / (sigma_fleet * sigma_fleet);
      for (int i = 0; i + 1 < n; ++i) {
        const double m = mean(i, v);
        gradient[0] += count[i] - m;
        gradient[1 + i] = -v[1 + i] / (sigma_group * sigma_group) + count[i] - m;
        precision[0][0] += m;
        precision[0][1 + i] = precision[1 + i][0] = m;
        precision[1 + i][1 + i] = 1 / (sigma_group * sigma_group) + m;
      }
      Mat l;
      if (!cholesky(precision, n, l)) break;
      const Vec step = cholesky_solve(l, n, gradient);
      double size = 0;
      for (int i = 0; i < n; ++i) size = std::max(size, std::abs(step[i]));
      // Damped: a first step from far away (a huge exposure) overshoots an exponential.
      const double scale = size > 2 ? 2 / size : 1;
      const double before = log_density(v);
      Vec next = v;
      for (double t = scale; t > 1e-6; t /= 2) {
        for (int i = 0; i < n; ++i) next[i] = v[i] + t * step[i];
        if (log_density(next) >= before) break;
      }
      v = next;
      if (size * scale < 1e-9) break;
    }
    return v;
  }
};

struct Sample {
  double log_weight;
  double u;
  std::array<double, kClassGroups> theta;
};

//! The weighted q-quantile of `values`.
double weighted_quantile(std::vector<std::pair<double, double>>& values, double q) {
  std::sort(values.begin(), values.end());
  double total = 0;
  for (const auto& [x, w] : values) total += w;
  double seen = 0;
  for (const auto& [x, w] : values) {
    seen += w;
    if (seen >= q * total) return x;
  }
  return values.back().first;
}

double finite_number(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : std::nan(""); }

}  // namespace

double PopulationPrior::covariate(const PriorDraw& d, ClassGroup g, const FleetCovariates& x) const {
  return g == ClassGroup::GpuMemory ? d.beta_hbm * std::log(x.hbm_gb / hbm_reference_gb) : 0;
}

PopulationPrior PopulationPrior::from_json(const nlohmann::json& doc, const std::string& file) {
  std::vector<ScenarioProblem> problems;
  auto problem = [&](std::string pointer, std::string reason) { problems.push_back({std::move(pointer), std::move(reason)}); };
  PopulationPrior prior;
  if (!doc.is_object()) throw ScenarioInvalid(file, {{"", "a prior is a JSON object (ctwin prior writes one)"}});
  if (doc.value("kind", "") != "ctwin-population-prior") problem("/kind", "must be \"ctwin-population-prior\": is this a prior file?");
  if (!doc.contains("name") || !doc["name"].is_string()) problem("/name", "missing: the prior's name, which a calibrated scenario records");
  else prior.name = doc["name"].get<std::string>();
  prior.hbm_reference_gb = doc.contains("hbm_reference_gb") ? finite_number(doc["hbm_reference_gb"]) : 80;
  if (!(prior.hbm_reference_gb > 0)) problem("/hbm_reference_gb", "must be a positive number of GB");
  const auto draws = doc.find("draws");
  if (draws == doc.end() || !draws->is_object()) {
    problem("/draws", "missing: the parameters' draws (mu by group, beta_hbm, sigma_fleet, sigma_group)");
    throw ScenarioInvalid(file, problems);
  }
  auto column = [&](const nlohmann::json& parent, const std::string& pointer, const char* key) -> std::vector<double> {
    const auto it = parent.find(key);
    if (it == parent.end() || !it->is_array() || it->empty()) {
      problem(pointer + "/" + key, "missing: an array of draws");
      return {};
    }
    std::vector<double> out;
    for (std::size_t i = 0; i < it->size(); ++i) {
      const double x = finite_number((*it)[i]);
      if (!std::isfinite(x)) problem(pointer + "/" + key + "/" + std::to_string(i), "must be a finite number");
      out.push_back(x);
    }
    return out;
  };
  std::array<std::vector<double>, kClassGroups> mu;
  const auto mu_json = draws->find("mu");
  if (mu_json == draws->end() || !mu_json->is_object()) problem("/draws/mu", "missing: mu by group");
  else
    for (int g = 0; g < kClassGroups; ++g) mu[g] = column(*mu_json, "/draws/mu", to_string(static_cast<ClassGroup>(g)));
  const std::vector<double> beta = column(*draws, "/draws", "beta_hbm"), fleet = column(*draws, "/draws", "sigma_fleet"),
                            group = column(*draws, "/draws", "sigma_group");
  const std::size_t n = fleet.size();
  for (const std::vector<double>* c : std::initializer_list<const std::vector<double>*>{&beta, &group, &mu[0], &mu[1], &mu[2], &mu[3], &mu[4]})
    if (!c->empty() && c->size() != n) problem("/draws", "every parameter needs as many draws (" + std::to_string(n) + ")");
  if (n > 0 && n < 10) problem("/draws/sigma_fleet", "fewer than 10 draws: too few to stand for a posterior");
  if (n > kMostPriorDraws) problem("/draws/sigma_fleet", std::to_string(n) + " draws: at most " + std::to_string(kMostPriorDraws) + " (thin them)");
  // Within what a scenario can hold: a log rate a component-day of e^(+-50), a slope of 10, a
  // spread of 10 (calibrate writes a scenario's sigma of at most 3, and says when it cut one).
  auto bounded = [&](const std::vector<double>& v, const std::string& at, double low, double high, const char* what) {
    for (std::size_t i = 0; i < v.size() && problems.size() < 20; ++i)
      if (!(v[i] >= low && v[i] <= high)) problem(at + "/" + std::to_string(i), std::string(what));
  };
  for (int g = 0; g < kClassGroups; ++g)
    bounded(mu[g], std::string("/draws/mu/") + to_string(static_cast<ClassGroup>(g)), -50, 50, "a log rate per component-day must be from -50 to 50");
  bounded(beta, "/draws/beta_hbm", -10, 10, "the HBM slope must be from -10 to 10");
  bounded(fleet, "/draws/sigma_fleet", 1e-6, 10, "a sigma must be above 0 and at most 10");
  bounded(group, "/draws/sigma_group", 1e-6, 10, "a sigma must be above 0 and at most 10");
  if (!problems.empty()) throw ScenarioInvalid(file, problems);
  for (std::size_t i = 0; i < n; ++i) {
    PriorDraw d;
    for (int g = 0; g < kClassGroups; ++g) d.mu[g] = mu[g][i];
    d.beta_hbm = beta[i];
    d.sigma_fleet = fleet[i];
    d.sigma_group = group[i];
    prior.draws.push_back(d);
  }
  return prior;
}

PopulationPrior PopulationPrior::read(const std::string& path) {
  const std::string text = read_capped_text(path);
  PopulationPrior prior = from_json(parse_json_document(text, path), path);
  prior.content_hash = ctwin::content_hash(text);
  return prior;
}

FleetPosterior fleet_posterior(const PopulationPrior& prior, const FleetCovariates& x, const FleetCounts& counts, int samples_per_draw,
                               std::uint64_t seed) {
  Rng rng(splitmix64(seed ^ 0x504F5354ULL));  // "POST"
  boost::random::normal_distribution<double> normal;
  boost::random::chi_squared_distribution<double> chi2(kTDegrees);
  std::vector<Sample> samples;
  samples.reserve(prior.draws.size() * static_cast<std::size_t>(samples_per_draw));
  for (const PriorDraw& d : prior.draws) {
    Joint joint;
    joint.sigma_fleet = d.sigma_fleet;
    joint.sigma_group = d.sigma_group;
    std::array<double, kClassGroups> base{};
    for (int g = 0; g < kClassGroups; ++g) {
      base[g] = d.mu[g] + prior.covariate(d, static_cast<ClassGroup>(g), x);
      if (counts[g].exposure_days <= 0) continue;
      const int i = joint.n - 1;
      joint.group[i] = g;
      joint.base[i] = base[g];
      joint.count[i] = counts[g].count;
      joint.exposure[i] = counts[g].exposure_days;
      ++joint.n;
    }
    const int n = joint.n;
    // The proposal: a multivariate t around the mode, scaled by the curvature there.
    Mat precision, l_precision, covariance{}, l;
    const Vec mode = joint.mode(precision);
    if (!cholesky(precision, n, l_precision)) continue;
    for (int j = 0; j < n; ++j) {
      Vec unit{};
      unit[j] = 1;
      const Vec column = cholesky_solve(l_precision, n, unit);
      for (int i = 0; i < n; ++i) covariance[i][j] = column[i];
    }
    if (!cholesky(covariance, n, l)) continue;
    double log_det = 0;
    for (int i = 0; i < n; ++i) log_det += std::log(l[i][i]);
    const double log_t_constant = boost::math::lgamma((kTDegrees + n) / 2) - boost::math::lgamma(kTDegrees / 2) -
                                  0.5 * n * std::log(kTDegrees * M_PI) - log_det;
    for (int s = 0; s < samples_per_draw; ++s) {
      Vec z{}, v = mode;
      double z2 = 0;
      for (int i = 0; i < n; ++i) z[i] = normal(rng), z2 += z[i] * z[i];
      const double w = chi2(rng) / kTDegrees;
      for (int i = 0; i < n; ++i)
        for (int k = 0; k <= i; ++k) v[i] += l[i][k] * z[k] / std::sqrt(w);
      const double log_q = log_t_constant - 0.5 * (kTDegrees + n) * std::log1p(z2 / w / kTDegrees);
      Sample sample;
      sample.log_weight = joint.log_density(v) - log_q;
      sample.u = v[0];
      for (int g = 0; g < kClassGroups; ++g) sample.theta[g] = base[g] + v[0] + d.sigma_group * normal(rng);  // unobserved: the prior's e
      for (int i = 0; i + 1 < n; ++i) sample.theta[joint.group[i]] = base[joint.group[i]] + v[0] + v[1 + i];
      if (std::isfinite(sample.log_weight)) samples.push_back(sample);
    }
  }
  FleetPosterior out;
  out.samples = samples.size();
  if (samples.empty())
    throw BadInput("the prior \"" + prior.name + "\": none of its " + std::to_string(prior.draws.size()) +
                   " draws can hold the fleet's counts (no finite posterior): check the traces' exposure, or the prior");
  const double top = std::max_element(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.log_weight < b.log_weight; })->log_weight;
  std::vector<double> weight;
  double total = 0, squares = 0;
  for (const Sample& s : samples) {
    weight.push_back(std::exp(s.log_weight - top));
    total += weight.back();
    squares += weight.back() * weight.back();
  }
  out.effective_samples = total * total / squares;
  auto mean_of = [&](auto f) {
    double sum = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) sum += weight[i] * f(samples[i]);
    return sum / total;
  };
  const double u_mean = mean_of([](const Sample& s) { return s.u; });
  const double u_var = mean_of([&](const Sample& s) { return (s.u - u_mean) * (s.u - u_mean); });
  std::vector<std::pair<double, double>> values(samples.size());
  auto quantiles = [&](auto f, double& p05, double& p50, double& p95) {
    for (std::size_t i = 0; i < samples.size(); ++i) values[i] = {f(samples[i]), weight[i]};
    p05 = weighted_quantile(values, 0.05), p50 = weighted_quantile(values, 0.5), p95 = weighted_quantile(values, 0.95);
  };
  double p05, p50, p95;
  quantiles([](const Sample& s) { return s.u; }, p05, p50, p95);
  out.fleet_factor_median = std::exp(p50), out.fleet_factor_p05 = std::exp(p05), out.fleet_factor_p95 = std::exp(p95);
  for (int g = 0; g < kClassGroups; ++g) {
    GroupRate& r = out.groups[g];
    r.observed = counts[g].exposure_days > 0;
    r.count = counts[g].count;
    r.exposure_days = counts[g].exposure_days;
    quantiles([g](const Sample& s) { return s.theta[g]; }, p05, p50, p95);
    r.median_per_day = std::exp(p50), r.p05_per_day = std::exp(p05), r.p95_per_day = std::exp(p95);
    // The 90% interval as a lognormal's, split by the share of its variance the fleet factor explains.
    const double t_mean = mean_of([g](const Sample& s) { return s.theta[g]; });
    const double t_var = mean_of([&](const Sample& s) { return (s.theta[g] - t_mean) * (s.theta[g] - t_mean); });
    const double cov = mean_of([&](const Sample& s) { return (s.theta[g] - t_mean) * (s.u - u_mean); });
    const double shared = u_var > 0 && t_var > 0 ? std::clamp(cov * cov / (u_var * t_var), 0.0, 1.0) : 0;
    const double sigma = std::max(1e-3, (p95 - p05) / (2 * kZ95));
    r.fleet_sigma = sigma * std::sqrt(shared);
    r.own_sigma = std::max(1e-3, sigma * std::sqrt(1 - shared));
  }
  return out;
}

std::array<double, kClassGroups> draw_fleet_rates(const PopulationPrior& prior, const FleetCovariates& x, std::uint64_t seed) {
  Rng rng(splitmix64(seed ^ 0x464C4545ULL));  // "FLEE"
  boost::random::normal_distribution<double> normal;
  const PriorDraw& d = prior.draws[boost::random::uniform_int_distribution<std::size_t>(0, prior.draws.size() - 1)(rng)];
  const double u = d.sigma_fleet * normal(rng);
  std::array<double, kClassGroups> rates{};
  for (int g = 0; g < kClassGroups; ++g)
    rates[g] = std::exp(d.mu[g] + prior.covariate(d, static_cast<ClassGroup>(g), x) + u + d.sigma_group * normal(rng));
  return rates;
}

}  // namespace ctwin
