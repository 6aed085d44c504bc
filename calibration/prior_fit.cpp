#include "calibration/prior_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include <boost/random/normal_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <boost/random/uniform_01.hpp>

#include "core/rng.hpp"
#include "core/version.hpp"

namespace ctwin::calib {

namespace {

constexpr std::size_t kMostHeldOut = 30;  //!< fleets each held out in turn (each a fit of its own)
constexpr double kMuPriorMean = -8.5;  //!< log 2e-4 a component-day: Llama 3's GPU faults, roughly
constexpr double kMuPriorSd = 3;       //!< a factor of 20 either way at one sigma: the data decide

//! The fleets of the fit, each with its rows: a count of some groups over the row's own exposure
//! (two rows of a fleet may cover different windows).
struct Model {
  struct Fleet {
    std::string name;
    double hbm_gb = 80;
    std::array<bool, kClassGroups> used{};  //!< groups its rows count
  };
  struct Row {
    int fleet;
    std::vector<int> groups;
    std::array<double, kClassGroups> exposure{};  //!< component-days, by group
    double count;
  };
  std::vector<Fleet> fleets;
  std::vector<Row> rows;
  std::vector<std::vector<int>> rows_of;  //!< per fleet
  double hbm_reference = 80;

  double covariate(int f, int g) const { return g == static_cast<int>(ClassGroup::GpuMemory) ? std::log(fleets[f].hbm_gb / hbm_reference) : 0; }
};

//! A row's exposure by group: GPU-days for the GPU groups, node-days for the rest.
std::array<double, kClassGroups> exposure_of(const FleetRow& r) {
  std::array<double, kClassGroups> e{};
  for (int g = 0; g < kClassGroups; ++g) e[g] = (group_component(static_cast<ClassGroup>(g)) == Component::Gpu ? r.gpus : r.nodes) * r.days;
  return e;
}

Model build_model(const std::vector<const FleetRow*>& rows) {
  Model m;
  std::map<std::string, int> index;
  for (const FleetRow* r : rows) {
    auto [it, added] = index.try_emplace(r->fleet, static_cast<int>(m.fleets.size()));
    if (added) m.fleets.push_back({r->fleet, r->hbm_gb, {}});
    Model::Row row{it->second, {}, exposure_of(*r), r->count};
    for (const ClassGroup g : r->groups) {
      row.groups.push_back(static_cast<int>(g));
      m.fleets[it->second].used[static_cast<int>(g)] = true;
    }
    m.rows.push_back(row);
  }
  m.rows_of.resize(m.fleets.size());
  for (std::size_t i = 0; i < m.rows.size(); ++i) m.rows_of[m.rows[i].fleet].push_back(static_cast<int>(i));
  return m;
}

//! The parameters, non-centred: u_f = sigma_fleet z_f, e_fg = sigma_group w_fg.
struct State {
  std::array<double, kClassGroups> mu{};
  double beta = 1, log_sigma_fleet = std::log(0.5), log_sigma_group = std::log(0.5);
  std::vector<double> z;
  std::vector<std::array<double, kClassGroups>> w;
};

class Posterior {
 public:
  Posterior(const Model& m, const PriorFitOptions& o) : m_(m), o_(o) {}

  double fleet_log_likelihood(const State& s, int f) const {
    double l = 0;
    const double sf = std::exp(s.log_sigma_fleet), sg = std::exp(s.log_sigma_group);
    for (const int i : m_.rows_of[f]) {
      const Model::Row& row = m_.rows[i];
      double mean = 0;
      for (const int g : row.groups)
        mean += row.exposure[g] * std::exp(std::min(700.0, s.mu[g] + s.beta * m_.covariate(f, g) + sf * s.z[f] + sg * s.w[f][g]));
      l += row.count * std::log(std::max(mean, 1e-300)) - mean;
    }
    return l;
  }
  double hyper_log_prior(const State& s) const {
    double l = 0;
    for (const double mu : s.mu) l += -0.5 * (mu - kMuPriorMean) * (mu - kMuPriorMean) / (kMuPriorSd * kMuPriorSd);
    l += -0.5 * (s.beta - o_.beta_prior_mean) * (s.beta - o_.beta_prior_mean) / (o_.beta_prior_sd * o_.beta_prior_sd);
    for (const double ls : {s.log_sigma_fleet, s.log_sigma_group}) {  // half-normal on sigma, sampled as log sigma
      const double sigma = std::exp(ls);
      l += -0.5 * sigma * sigma / (o_.sigma_prior_scale * o_.sigma_prior_scale) + ls;
    }
    return l;
  }
  double latent_log_prior(const State& s, int f) const {
    double l = -0.5 * s.z[f] * s.z[f];
    for (int g = 0; g < kClassGroups; ++g)
      if (m_.fleets[f].used[g]) l += -0.5 * s.w[f][g] * s.w[f][g];
    return l;
  }
  double total(const State& s) const {
    double l = hyper_log_prior(s);
    for (std::size_t f = 0; f < m_.fleets.size(); ++f) l += fleet_log_likelihood(s, static_cast<int>(f)) + latent_log_prior(s, static_cast<int>(f));
    return l;
  }

 private:
  const Model& m_;
  const PriorFitOptions& o_;
};

//! One random-walk coordinate with its own step, tuned towards 44% acceptance during warm-up.
struct Step {
  double size = 0.3;
  long tried = 0, taken = 0;
  void tune(bool accepted, long sweep) {
    size *= std::exp(((accepted ? 1.0 : 0.0) - 0.44) / std::sqrt(static_cast<double>(sweep) + 10));
    size = std::clamp(size, 1e-4, 10.0);
  }
};

struct Chain {
  std::vector<PriorDraw> kept;
  std::vector<std::vector<double>> fleet_factors;  //!< per kept draw: each fleet's u
};

Chain run_chain(const Model& m, const PriorFitOptions& o, std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> normal;
  boost::random::uniform_01<double> uniform;
  const int fleets = static_cast<int>(m.fleets.size());
  Posterior post(m, o);
  State s;
  s.z.assign(fleets, 0.0);
  s.w.assign(fleets, {});
  // Start each group at the pooled rate of the rows that count it alone.
  for (int g = 0; g < kClassGroups; ++g) {
    double k = 0, e = 0;
    for (const auto& row : m.rows)
      if (row.groups.size() == 1 && row.groups[0] == g) k += row.count, e += row.exposure[g];
    s.mu[g] = e > 0 ? std::log((k + 0.5) / e) : kMuPriorMean;
    s.mu[g] += 0.3 * normal(rng);  // chains start apart, so R-hat can see them disagree
  }
  std::vector<double> fleet_l(fleets);
  for (int f = 0; f < fleets; ++f) fleet_l[f] = post.fleet_log_likelihood(s, f);
  double hyper = post.hyper_log_prior(s);
  std::vector<double> latent(fleets);
  for (int f = 0; f < fleets; ++f) latent[f] = post.latent_log_prior(s, f);
  auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };

  std::vector<Step> z_step(fleets), mu_step(kClassGroups), shift_step(kClassGroups);
  std::vector<std::array<Step, kClassGroups>> w_step(fleets);
  Step beta_step, sf_step, sg_step, sf_scale, sg_scale, level_step;
  const long total_sweeps = static_cast<long>(o.warmup) + o.iterations;
  const long thin = std::max<long>(1, o.iterations / std::max(1, o.keep / std::max(1, o.chains)));
  Chain chain;
  auto accept = [&](double delta) { return std::log(uniform(rng)) < delta; };

  for (long sweep = 0; sweep < total_sweeps; ++sweep) {
    const bool warm = sweep < o.warmup;
    auto note = [&](Step& st, bool ok) {
      ++st.tried, st.taken += ok;
      if (warm) st.tune(ok, sweep);
    };
    // Each fleet's factor and its groups' own, against its rows only.
    for (int f = 0; f < fleets; ++f) {
      auto update = [&](double& x, Step& st) {
        const double old = x, old_l = fleet_l[f], old_p = latent[f];
        x += st.size * normal(rng);
        const double l = post.fleet_log_likelihood(s, f), p = post.latent_log_prior(s, f);
        const bool ok = accept(l + p - old_l - old_p);
        if (ok) fleet_l[f] = l, latent[f] = p;
        else x = old;
        note(st, ok);
      };
      update(s.z[f], z_step[f]);
      for (int g = 0; g < kClassGroups; ++g)
        if (m.fleets[f].used[g]) update(s.w[f][g], w_step[f][g]);
    }
    // The population's parameters, against every fleet.
    auto update_global = [&](double& x, Step& st) {
      const double old = x, before = hyper + sum(fleet_l);
      x += st.size * normal(rng);
      std::vector<double> l(fleets);
      for (int f = 0; f < fleets; ++f) l[f] = post.fleet_log_likelihood(s, f);
      const double h = post.hyper_log_prior(s);
      const bool ok = accept(h + sum(l) - before);
      if (ok) fleet_l = l, hyper = h;
      else x = old;
      note(st, ok);
    };
    for (int g = 0; g < kClassGroups; ++g) update_global(s.mu[g], mu_step[g]);
    update_global(s.beta, beta_step);
    update_global(s.log_sigma_fleet, sf_step);
    update_global(s.log_sigma_group, sg_step);
    // A spread rescaled with the factors it scales: the rates stay, only the priors' terms move.
    auto rescale = [&](Step& st, bool fleet_level) {
      const double delta = st.size * normal(rng);
      State next = s;
      (fleet_level ? next.log_sigma_fleet : next.log_sigma_group) += delta;
      int scaled = 0;
      for (int f = 0; f < fleets; ++f) {
        if (fleet_level) next.z[f] *= std::exp(-delta), ++scaled;
        else
          for (int g = 0; g < kClassGroups; ++g)
            if (m.fleets[f].used[g]) next.w[f][g] *= std::exp(-delta), ++scaled;
      }
      double before = hyper, after = post.hyper_log_prior(next);
      std::vector<double> lat(fleets);
      for (int f = 0; f < fleets; ++f) before += latent[f], lat[f] = post.latent_log_prior(next, f), after += lat[f];
      const bool ok = accept(after - before - delta * scaled);  // the Jacobian of the rescaled factors
      if (ok) s = next, latent = lat, hyper = post.hyper_log_prior(s);
      note(st, ok);
    };
    rescale(sf_scale, true);
    rescale(sg_scale, false);
    // A group's level traded against its fleets' own factors, and every level against the fleets':
    // the rates stay.
    for (int g = 0; g < kClassGroups; ++g) {
      const double delta = shift_step[g].size * normal(rng), sg = std::exp(s.log_sigma_group);
      State next = s;
      next.mu[g] += delta;
      for (int f = 0; f < fleets; ++f)
        if (m.fleets[f].used[g]) next.w[f][g] -= delta / sg;
      double before = hyper, after = post.hyper_log_prior(next);
      std::vector<double> lat(fleets);
      for (int f = 0; f < fleets; ++f) before += latent[f], lat[f] = post.latent_log_prior(next, f), after += lat[f];
      const bool ok = accept(after - before);
      if (ok) s = next, latent = lat, hyper = after - sum(lat);
      note(shift_step[g], ok);
    }
    {
      const double delta = level_step.size * normal(rng), sf = std::exp(s.log_sigma_fleet);
      State next = s;
      for (double& mu : next.mu) mu += delta;
      for (double& z : next.z) z -= delta / sf;
      double before = hyper, after = post.hyper_log_prior(next);
      std::vector<double> lat(fleets);
      for (int f = 0; f < fleets; ++f) before += latent[f], lat[f] = post.latent_log_prior(next, f), after += lat[f];
      const bool ok = accept(after - before);
      if (ok) s = next, latent = lat, hyper = after - sum(lat);
      note(level_step, ok);
    }
    if (!warm && (sweep - o.warmup) % thin == thin - 1) {
      PriorDraw d;
      d.mu = s.mu;
      d.beta_hbm = s.beta;
      d.sigma_fleet = std::exp(s.log_sigma_fleet);
      d.sigma_group = std::exp(s.log_sigma_group);
      chain.kept.push_back(d);
      std::vector<double> u;
      for (int f = 0; f < fleets; ++f) u.push_back(d.sigma_fleet * s.z[f]);
      chain.fleet_factors.push_back(u);
    }
  }
  return chain;
}

//! Split R-hat (Gelman et al., BDA3 11.4) of one parameter over the chains' kept draws.
double split_rhat(const std::vector<std::vector<double>>& chains) {
  std::vector<std::vector<double>> halves;
  for (const auto& c : chains) {
    const std::size_t n = c.size() / 2;
    if (n < 2) return std::nan("");
    halves.emplace_back(c.begin(), c.begin() + static_cast<long>(n));
    halves.emplace_back(c.begin() + static_cast<long>(n), c.begin() + static_cast<long>(2 * n));
  }
  const double n = static_cast<double>(halves.front().size());
  std::vector<double> means, vars;
  for (const auto& h : halves) {
    const double mean = std::accumulate(h.begin(), h.end(), 0.0) / n;
    double v = 0;
    for (double x : h) v += (x - mean) * (x - mean);
    means.push_back(mean), vars.push_back(v / (n - 1));
  }
  const double grand = std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(means.size());
  double b = 0;
  for (double mean : means) b += (mean - grand) * (mean - grand);
  b *= n / static_cast<double>(means.size() - 1);
  const double w = std::accumulate(vars.begin(), vars.end(), 0.0) / static_cast<double>(vars.size());
  return w > 0 ? std::sqrt(((n - 1) / n * w + b / n) / w) : 1.0;
}

//! A Poisson count of `mean`, by the normal approximation past a billion (Boost's is for moderate means).
double poisson_count(double mean, Rng& rng) {
  if (!(mean < 1e9)) return std::isfinite(mean) ? std::round(mean + std::sqrt(mean) * boost::random::normal_distribution<double>()(rng)) : mean;
  return static_cast<double>(boost::random::poisson_distribution<long, double>(std::max(mean, 1e-12))(rng));
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

nlohmann::ordered_json interval(const std::vector<double>& v, double scale = 1) {
  return {{"median", quantile(v, 0.5) * scale}, {"p05", quantile(v, 0.05) * scale}, {"p95", quantile(v, 0.95) * scale}};
}

struct Fitted {
  std::vector<PriorDraw> draws;
  std::vector<std::vector<double>> fleet_factors;
  nlohmann::ordered_json rhat;
  double worst_rhat = 1;
};

Fitted fit(const Model& m, const PriorFitOptions& o) {
  Fitted out;
  std::vector<Chain> chains;
  for (int c = 0; c < o.chains; ++c) chains.push_back(run_chain(m, o, splitmix64(o.seed * 1000003ULL + static_cast<std::uint64_t>(c))));
  std::map<std::string, std::vector<std::vector<double>>> by_parameter;
  for (const Chain& c : chains) {
    std::map<std::string, std::vector<double>> one;
    for (const PriorDraw& d : c.kept) {
      for (int g = 0; g < kClassGroups; ++g) one[std::string("mu_") + to_string(static_cast<ClassGroup>(g))].push_back(d.mu[g]);
      one["beta_hbm"].push_back(d.beta_hbm);
      one["sigma_fleet"].push_back(d.sigma_fleet);
      one["sigma_group"].push_back(d.sigma_group);
    }
    for (auto& [k, v] : one) by_parameter[k].push_back(std::move(v));
    out.draws.insert(out.draws.end(), c.kept.begin(), c.kept.end());
    out.fleet_factors.insert(out.fleet_factors.end(), c.fleet_factors.begin(), c.fleet_factors.end());
  }
  for (const auto& [k, v] : by_parameter) {
    const double r = split_rhat(v);
    out.rhat[k] = r;
    out.worst_rhat = std::max(out.worst_rhat, std::isnan(r) ? 99.0 : r);
  }
  return out;
}

//! Where a row's count falls among counts predicted for a new fleet like its own:
//! P(K < k) + P(K = k) / 2, K over the draws and fleets sampled from them.
double predictive_rank(const std::vector<PriorDraw>& draws, const FleetRow& row, double hbm_reference, std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> normal;
  const std::array<double, kClassGroups> exposure = exposure_of(row);
  double below = 0, equal = 0, n = 0;
  for (const PriorDraw& d : draws)
    for (int s = 0; s < 40; ++s) {
      const double u = d.sigma_fleet * normal(rng);
      double mean = 0;
      for (const ClassGroup g : row.groups) {
        const int gi = static_cast<int>(g);
        const double x = g == ClassGroup::GpuMemory ? d.beta_hbm * std::log(row.hbm_gb / hbm_reference) : 0;
        mean += exposure[gi] * std::exp(d.mu[gi] + x + u + d.sigma_group * normal(rng));
      }
      const double k = poisson_count(mean, rng);
      below += k < row.count, equal += k == row.count, n += 1;
    }
  return (below + equal / 2) / n;
}

//! A quarter's count of each group for a fleet of `gpus` GPUs (8 a node) with no data of its own:
//! the predictive interval a planner would get.
nlohmann::ordered_json quarter_intervals(const std::vector<PriorDraw>& draws, double gpus, std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> normal;
  nlohmann::ordered_json out;
  std::array<std::vector<double>, kClassGroups> counts, rates;
  for (const PriorDraw& d : draws)
    for (int s = 0; s < 40; ++s) {
      const double u = d.sigma_fleet * normal(rng);
      for (int g = 0; g < kClassGroups; ++g) {
        const double exposure = (group_component(static_cast<ClassGroup>(g)) == Component::Gpu ? gpus : gpus / 8) * 91;
        const double rate = std::exp(d.mu[g] + u + d.sigma_group * normal(rng));
        rates[g].push_back(rate);
        counts[g].push_back(poisson_count(exposure * rate, rng));
      }
    }
  for (int g = 0; g < kClassGroups; ++g) {
    const double p5 = quantile(counts[g], 0.05), p95 = quantile(counts[g], 0.95);
    out[to_string(static_cast<ClassGroup>(g))] = {{"count_p05", p5},
                                                   {"count_p50", quantile(counts[g], 0.5)},
                                                   {"count_p95", p95},
                                                   {"count_ratio", p5 > 0 ? nlohmann::ordered_json(p95 / p5) : nlohmann::ordered_json(nullptr)},
                                                   {"rate_ratio", quantile(rates[g], 0.95) / quantile(rates[g], 0.05)}};
  }
  return out;
}

}  // namespace

PriorFit fit_population_prior(const FleetTable& table, const std::string& name, const PriorFitOptions& options) {
  std::vector<const FleetRow*> fitted;
  for (const FleetRow& r : table.rows)
    if (r.left_out.empty()) fitted.push_back(&r);
  const Model model = build_model(fitted);
  const Fitted all = fit(model, options);
  for (const PriorDraw& d : all.draws) {
    // What a prior file holds (models/fleet_prior: PopulationPrior::from_json), else no prior at all.
    bool held = std::abs(d.beta_hbm) <= 10 && d.sigma_fleet <= 10 && d.sigma_group <= 10;
    for (const double mu : d.mu) held = held && std::abs(mu) <= 50;
    if (!held)
      throw TraceUnreadable(table.report.file + ": the counts over their exposures drive the fit past what a scenario holds (a log rate "
                                                "per component-day beyond +-50, or fleets apart by a sigma above 10): check the rows' units");
  }
  PriorFit out;
  out.prior.name = name;
  out.prior.hbm_reference_gb = model.hbm_reference;
  out.prior.draws = all.draws;

  nlohmann::ordered_json& report = out.report;
  report["name"] = name;
  report["table"] = table.report.file;
  report["model"] = "log rate per component-day (GPU-days: gpu, gpu_memory; node-days: network, host, software) = mu_group + beta_hbm "
                    "log(HBM GB / 80) [gpu_memory] + u_fleet + e_fleet_group; u ~ N(0, sigma_fleet), e ~ N(0, sigma_group); priors "
                    "mu ~ N(log 2e-4, 3), beta_hbm ~ N(" + std::to_string(options.beta_prior_mean).substr(0, 4) + ", " +
                    std::to_string(options.beta_prior_sd).substr(0, 4) + "), sigmas half-normal(" +
                    std::to_string(options.sigma_prior_scale).substr(0, 4) + ")";
  report["sampler"] = {{"chains", options.chains}, {"warmup", options.warmup}, {"iterations", options.iterations},
                       {"draws", all.draws.size()}, {"seed", options.seed}, {"split_rhat", all.rhat}, {"worst_rhat", all.worst_rhat}};
  auto column = [&](auto f) {
    std::vector<double> v;
    for (const PriorDraw& d : all.draws) v.push_back(f(d));
    return v;
  };
  nlohmann::ordered_json params;
  for (int g = 0; g < kClassGroups; ++g) {
    const auto group = static_cast<ClassGroup>(g);
    params[std::string("rate_") + to_string(group) + "_per_1000_" + (group_component(group) == Component::Gpu ? "gpu" : "node") + "_days"] =
        interval(column([g](const PriorDraw& d) { return std::exp(d.mu[g]) * 1000; }));
  }
  params["beta_hbm"] = interval(column([](const PriorDraw& d) { return d.beta_hbm; }));
  params["sigma_fleet"] = interval(column([](const PriorDraw& d) { return d.sigma_fleet; }));
  params["sigma_group"] = interval(column([](const PriorDraw& d) { return d.sigma_group; }));
  report["parameters"] = params;

  // Each fleet: its counts, its factor against the population, and where it falls held out.
  nlohmann::ordered_json fleets = nlohmann::ordered_json::array();
  std::map<std::string, nlohmann::ordered_json> holdout_by_fleet;
  // Held out in turn: each a whole fit again, so not past kMostHeldOut fleets (said in the report).
  const bool holdouts = options.holdouts && model.fleets.size() >= 3 && model.fleets.size() <= kMostHeldOut;
  if (options.holdouts && !holdouts)
    report["held_out_skipped"] = model.fleets.size() < 3 ? "fewer than three fleets: none can be held out"
                                                          : std::to_string(model.fleets.size()) + " fleets: more than " +
                                                                std::to_string(kMostHeldOut) + " to refit one by one";
  if (holdouts)
    for (std::size_t f = 0; f < model.fleets.size(); ++f) {
      std::vector<const FleetRow*> others;
      for (const FleetRow* r : fitted)
        if (r->fleet != model.fleets[f].name) others.push_back(r);
      const Fitted without = fit(build_model(others), options);
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const FleetRow* r : fitted)
        if (r->fleet == model.fleets[f].name) {
          const double rank = predictive_rank(without.draws, *r, model.hbm_reference, options.seed + 17 * f);
          rows.push_back({{"class_group", r->label}, {"count", r->count}, {"rank", rank}, {"inside_90", rank >= 0.05 && rank <= 0.95}});
        }
      holdout_by_fleet[model.fleets[f].name] = rows;
    }
  for (std::size_t f = 0; f < model.fleets.size(); ++f) {
    std::vector<double> u;
    for (const auto& draw : all.fleet_factors) u.push_back(std::exp(draw[f]));
    nlohmann::ordered_json j{{"fleet", model.fleets[f].name}, {"hbm_gb", model.fleets[f].hbm_gb}, {"factor", interval(u)}};
    nlohmann::ordered_json counts = nlohmann::ordered_json::array();
    for (const FleetRow* r : fitted)
      if (r->fleet == model.fleets[f].name)
        counts.push_back({{"class_group", r->label}, {"count", r->count}, {"gpus", r->gpus}, {"days", r->days}, {"line", r->line}});
    j["counts"] = counts;
    if (holdout_by_fleet.count(model.fleets[f].name)) j["held_out"] = holdout_by_fleet[model.fleets[f].name];
    fleets.push_back(j);
  }
  report["fleets"] = fleets;
  // Rows kept out of the fit, predicted by the whole fit (where they fall, not a test of it).
  nlohmann::ordered_json apart = nlohmann::ordered_json::array();
  for (const FleetRow& r : table.rows)
    if (!r.left_out.empty()) {
      nlohmann::ordered_json j{{"fleet", r.fleet}, {"class_group", r.label}, {"count", r.count}, {"why", r.left_out}, {"line", r.line}};
      if (!r.groups.empty() && r.gpus > 0 && r.days > 0 && (r.nodes > 0 || std::all_of(r.groups.begin(), r.groups.end(), [](ClassGroup g) {
                                                              return group_component(g) == Component::Gpu;
                                                            })))
        j["rank_in_the_fit"] = predictive_rank(all.draws, r, model.hbm_reference, options.seed + 7919 + static_cast<std::uint64_t>(r.line));
      apart.push_back(j);
    }
  report["not_fitted"] = apart;
  report["quarter_at_1024_gpus"] = quarter_intervals(all.draws, 1024, options.seed + 31);
  report["quarter_at_8192_gpus"] = quarter_intervals(all.draws, 8192, options.seed + 37);
  return out;
}

nlohmann::ordered_json prior_document(const PriorFit& fit) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = 1;
  doc["kind"] = "ctwin-population-prior";
  doc["name"] = fit.prior.name;
  doc["ctwin_version"] = kCtwinVersion;
  doc["hbm_reference_gb"] = fit.prior.hbm_reference_gb;
  doc["report"] = fit.report;
  auto rounded = [](double x) { return std::round(x * 1e6) / 1e6; };
  nlohmann::ordered_json mu;
  for (int g = 0; g < kClassGroups; ++g) {
    std::vector<double> v;
    for (const PriorDraw& d : fit.prior.draws) v.push_back(rounded(d.mu[g]));
    mu[to_string(static_cast<ClassGroup>(g))] = v;
  }
  std::vector<double> beta, fleet, group;
  for (const PriorDraw& d : fit.prior.draws) beta.push_back(rounded(d.beta_hbm)), fleet.push_back(rounded(d.sigma_fleet)), group.push_back(rounded(d.sigma_group));
  doc["draws"] = {{"mu", mu}, {"beta_hbm", beta}, {"sigma_fleet", fleet}, {"sigma_group", group}};
  return doc;
}

std::string prior_text(const nlohmann::ordered_json& r) {
  std::ostringstream out;
  char line[256];
  out << "ctwin prior: \"" << r["name"].get<std::string>() << "\" from " << r["table"].get<std::string>() << "\n  " << r["model"].get<std::string>()
      << "\n\n  parameter                               median      90% interval\n";
  for (const auto& [k, v] : r["parameters"].items()) {
    std::snprintf(line, sizeof line, "  %-38s %8.4g   [%.4g, %.4g]\n", k.c_str(), v["median"].get<double>(), v["p05"].get<double>(), v["p95"].get<double>());
    out << line;
  }
  std::snprintf(line, sizeof line, "  (%zu draws from %d chains; worst split R-hat %.3f)\n\n", static_cast<std::size_t>(r["sampler"]["draws"].get<long>()),
                r["sampler"]["chains"].get<int>(), r["sampler"]["worst_rhat"].get<double>());
  out << line;
  if (r["sampler"]["worst_rhat"].get<double>() > 1.05)
    out << "  warning: the chains disagree (split R-hat above 1.05): more --iterations before trusting these draws\n";
  out << "  fleet            factor (90%)             held out: rank of each count among its predictions\n";
  for (const auto& f : r["fleets"]) {
    std::snprintf(line, sizeof line, "  %-15s  %5.2f [%5.2f, %5.2f]  ", f["fleet"].get<std::string>().c_str(), f["factor"]["median"].get<double>(),
                  f["factor"]["p05"].get<double>(), f["factor"]["p95"].get<double>());
    out << line;
    if (f.contains("held_out"))
      for (const auto& h : f["held_out"]) {
        std::snprintf(line, sizeof line, " %s %.0f: %.2f%s", h["class_group"].get<std::string>().c_str(), h["count"].get<double>(), h["rank"].get<double>(),
                      h["inside_90"].get<bool>() ? "" : " (outside)");
        out << line;
      }
    out << "\n";
  }
  if (!r["not_fitted"].empty()) {
    out << "\n  not fitted:\n";
    for (const auto& n : r["not_fitted"]) {
      out << "    " << n["fleet"].get<std::string>() << " " << n["class_group"].get<std::string>() << " " << n["count"].get<double>();
      if (n.contains("rank_in_the_fit")) {
        std::snprintf(line, sizeof line, " (rank %.3f in the fit)", n["rank_in_the_fit"].get<double>());
        out << line;
      }
      out << ": " << n["why"].get<std::string>() << "\n";
    }
  }
  out << "\n  a quarter (91 days) at 1,024 GPUs for a fleet with no data of its own (H100 80 GB), by group:\n"
         "    group          count p5    p50    p95    p95/p5   rate p95/p5\n";
  for (const auto& [g, q] : r["quarter_at_1024_gpus"].items()) {
    std::snprintf(line, sizeof line, "    %-12s %8.0f %6.0f %6.0f   %7s   %6.1f\n", g.c_str(), q["count_p05"].get<double>(), q["count_p50"].get<double>(),
                  q["count_p95"].get<double>(), q["count_ratio"].is_null() ? "inf" : std::to_string(q["count_ratio"].get<double>()).substr(0, 5).c_str(),
                  q["rate_ratio"].get<double>());
    out << line;
  }
  return out.str();
}

}  // namespace ctwin::calib
