#include "calibration/prior_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <sstream>

#include <boost/math/special_functions/gamma.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <boost/random/uniform_01.hpp>

#include "core/rng.hpp"
#include "core/version.hpp"

namespace ctwin::calib {

namespace {

constexpr std::array<ClassGroup, 4> kHardware{ClassGroup::Gpu, ClassGroup::GpuMemory, ClassGroup::Network, ClassGroup::Host};
constexpr double kMuPriorMean = -8.5;  //!< log 2e-4 a component-day: Llama 3's GPU faults, roughly
constexpr double kMuPriorSd = 3;       //!< a factor of 20 either way at one sigma: the data decide

//! The groups a table's class_group names: one, or the hardware the fleets that publish only a total count.
std::optional<std::vector<ClassGroup>> groups_named(const std::string& label) {
  if (label == "hardware_total") return std::vector<ClassGroup>(kHardware.begin(), kHardware.end());
  if (label == "gpu_and_gpu_memory") return std::vector<ClassGroup>{ClassGroup::Gpu, ClassGroup::GpuMemory};
  if (const auto g = class_group_named(label)) return std::vector<ClassGroup>{*g};
  return std::nullopt;
}

//! The fleets of the fit, each with its exposures and rows.
struct Model {
  struct Fleet {
    std::string name;
    double hbm_gb = 80;
    std::array<double, kClassGroups> exposure{};  //!< component-days, by group
    std::array<bool, kClassGroups> used{};        //!< groups its rows count
  };
  struct Row {
    int fleet;
    std::vector<int> groups;
    double count;
  };
  std::vector<Fleet> fleets;
  std::vector<Row> rows;
  std::vector<std::vector<int>> rows_of;  //!< per fleet
  double hbm_reference = 80;

  double covariate(int f, int g) const { return g == static_cast<int>(ClassGroup::GpuMemory) ? std::log(fleets[f].hbm_gb / hbm_reference) : 0; }
};

Model::Fleet fleet_of(const FleetRow& r) {
  Model::Fleet f;
  f.name = r.fleet;
  f.hbm_gb = r.hbm_gb;
  for (int g = 0; g < kClassGroups; ++g)
    f.exposure[g] = (group_component(static_cast<ClassGroup>(g)) == Component::Gpu ? r.gpus : r.nodes) * r.days;
  return f;
}

Model build_model(const std::vector<const FleetRow*>& rows) {
  Model m;
  std::map<std::string, int> index;
  for (const FleetRow* r : rows) {
    auto [it, added] = index.try_emplace(r->fleet, static_cast<int>(m.fleets.size()));
    if (added) m.fleets.push_back(fleet_of(*r));
    Model::Row row{it->second, {}, r->count};
    // A row's own days and GPUs are its exposure (two rows of a fleet may cover different windows).
    Model::Fleet own = fleet_of(*r);
    for (const ClassGroup g : r->groups) {
      row.groups.push_back(static_cast<int>(g));
      m.fleets[it->second].used[static_cast<int>(g)] = true;
      m.fleets[it->second].exposure[static_cast<int>(g)] = own.exposure[static_cast<int>(g)];
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
        mean += m_.fleets[f].exposure[g] * std::exp(std::min(700.0, s.mu[g] + s.beta * m_.covariate(f, g) + sf * s.z[f] + sg * s.w[f][g]));
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
      if (row.groups.size() == 1 && row.groups[0] == g) k += row.count, e += m.fleets[row.fleet].exposure[g];
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
    auto rescale = [&](double& log_sigma, Step& st, bool fleet_level) {
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
      (void)log_sigma;
    };
    rescale(s.log_sigma_fleet, sf_scale, true);
    rescale(s.log_sigma_group, sg_scale, false);
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
double predictive_rank(const std::vector<PriorDraw>& draws, const Model::Fleet& fleet, const FleetRow& row, double hbm_reference,
                       std::uint64_t seed) {
  Rng rng(seed);
  boost::random::normal_distribution<double> normal;
  double below = 0, equal = 0, n = 0;
  for (const PriorDraw& d : draws)
    for (int s = 0; s < 40; ++s) {
      const double u = d.sigma_fleet * normal(rng);
      double mean = 0;
      for (const ClassGroup g : row.groups) {
        const int gi = static_cast<int>(g);
        const double x = g == ClassGroup::GpuMemory ? d.beta_hbm * std::log(fleet.hbm_gb / hbm_reference) : 0;
        mean += fleet.exposure[gi] * std::exp(d.mu[gi] + x + u + d.sigma_group * normal(rng));
      }
      const double k = mean > 1e9 ? std::round(mean + std::sqrt(mean) * normal(rng))
                                  : static_cast<double>(boost::random::poisson_distribution<long, double>(std::max(mean, 1e-12))(rng));
      below += k < row.count, equal += k == row.count, n += 1;
    }
  return (below + equal / 2) / n;
}

//! A quarter's count of each group for a fleet of `gpus` GPUs (8 a node) with no data of its own:
//! the predictive interval a planner would get.
nlohmann::ordered_json quarter_intervals(const std::vector<PriorDraw>& draws, double gpus, double hbm_reference, std::uint64_t seed) {
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
        counts[g].push_back(static_cast<double>(boost::random::poisson_distribution<long, double>(std::max(exposure * rate, 1e-12))(rng)));
      }
    }
  (void)hbm_reference;
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

std::string group_list(const FleetRow& r) { return r.label; }

}  // namespace

FleetTable read_fleet_table(std::istream& in, const std::string& file) {
  FleetTable table;
  table.report.file = file;
  table.report.kind = "fleet-table";
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    const std::vector<std::string> names = split_csv(text);
    if (const std::string why = header_problem(names); !why.empty()) {
      table.report.problem(number, why);
      return false;
    }
    at = columns_of(names, {"fleet", "gpu", "hbm_gb", "gpus", "nodes", "days", "class_group", "count", "in_fit"});
    for (int i : {0, 2, 3, 4, 5, 6, 7})
      if (at[static_cast<std::size_t>(i)] < 0) {
        table.report.problem(number, "the header needs fleet, hbm_gb, gpus, nodes, days, class_group and count");
        return false;
      }
    return true;
  };
  read_lines(in, table.report, header, [&](int number, const std::string& text) {
    const std::vector<std::string> f = split_csv(text);
    FleetRow r;
    r.line = number;
    r.fleet = field_at(f, at, 0);
    r.gpu = field_at(f, at, 1);
    r.label = field_at(f, at, 6);
    const std::string in_fit = field_at(f, at, 8);
    if (r.fleet.empty()) return table.report.problem(number, "fleet is empty");
    if (!finite_number(field_at(f, at, 7), r.count) || r.count < 0 || r.count > 1e12)
      return table.report.problem(number, "count must be a number of faults from 0 to 1e12");
    if (in_fit.rfind("no", 0) == 0) {
      r.left_out = in_fit.size() > 4 ? in_fit.substr(4) : "the table says so";
    } else if (!in_fit.empty() && in_fit != "yes") {
      return table.report.problem(number, "in_fit must be \"yes\" or \"no: why\"");
    }
    const auto groups = groups_named(r.label);
    if (!groups) {
      if (r.left_out.empty()) return table.report.problem(number, "class_group \"" + r.label + "\" is not a group (gpu, gpu_memory, network, host, software, hardware_total)");
      r.left_out += " (class_group \"" + r.label + "\" is not a group)";
    } else {
      r.groups = *groups;
    }
    auto number_or = [&](int which, double& out, const char* what) {
      const std::string v = field_at(f, at, which);
      if (v.empty()) return false;
      if (!finite_number(v, out) || out <= 0 || out > 1e12) {
        table.report.problem(number, std::string(what) + " must be a positive number");
        return false;
      }
      return true;
    };
    const bool hbm = number_or(2, r.hbm_gb, "hbm_gb"), gpus = number_or(3, r.gpus, "gpus"), nodes = number_or(4, r.nodes, "nodes"),
               days = number_or(5, r.days, "days");
    bool node_groups = false;
    for (const ClassGroup g : r.groups) node_groups |= group_component(g) == Component::Node;
    if (r.left_out.empty() && (!hbm || !gpus || !days || (node_groups && !nodes)))
      return table.report.problem(number, "a fitted row needs hbm_gb, gpus, days and, for a node group, nodes");
    if (!hbm) r.hbm_gb = 80;
    table.rows.push_back(r);
    ++table.report.parsed;
  });
  if (std::none_of(table.rows.begin(), table.rows.end(), [](const FleetRow& r) { return r.left_out.empty(); })) {
    if (!table.report.malformed.empty())
      throw TraceUnreadable(file + ": line " + std::to_string(table.report.malformed.front().line) + ": " + table.report.malformed.front().reason);
    throw TraceUnreadable(file + ": no row to fit (a fleet table: fleet, gpu, hbm_gb, gpus, nodes, days, class_group, count, in_fit)");
  }
  return table;
}

PriorFit fit_population_prior(const FleetTable& table, const std::string& name, const PriorFitOptions& options) {
  std::vector<const FleetRow*> fitted;
  for (const FleetRow& r : table.rows)
    if (r.left_out.empty()) fitted.push_back(&r);
  const Model model = build_model(fitted);
  const Fitted all = fit(model, options);
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
  if (options.holdouts && model.fleets.size() >= 3)
    for (std::size_t f = 0; f < model.fleets.size(); ++f) {
      std::vector<const FleetRow*> others;
      for (const FleetRow* r : fitted)
        if (r->fleet != model.fleets[f].name) others.push_back(r);
      PriorFitOptions lighter = options;
      const Fitted without = fit(build_model(others), lighter);
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (const FleetRow* r : fitted)
        if (r->fleet == model.fleets[f].name) {
          const double rank = predictive_rank(without.draws, fleet_of(*r), *r, model.hbm_reference, options.seed + 17 * f);
          rows.push_back({{"class_group", group_list(*r)}, {"count", r->count}, {"rank", rank}, {"inside_90", rank >= 0.05 && rank <= 0.95}});
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
        j["rank_in_the_fit"] = predictive_rank(all.draws, fleet_of(r), r, model.hbm_reference, options.seed + 7919 + r.line);
      apart.push_back(j);
    }
  report["not_fitted"] = apart;
  report["quarter_at_1024_gpus"] = quarter_intervals(all.draws, 1024, model.hbm_reference, options.seed + 31);
  report["quarter_at_8192_gpus"] = quarter_intervals(all.draws, 8192, model.hbm_reference, options.seed + 37);
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
  out << line << "  fleet            factor (90%)             held out: rank of each count among its predictions\n";
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
