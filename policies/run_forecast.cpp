#include "policies/run_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <boost/math/distributions/gamma.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>

#include "core/rng.hpp"

namespace ctwin {

namespace {

constexpr double kDay = 86400;
constexpr double kNeverS = 1e12;  //!< a run whose interruptions outpace its progress never ends

//! A rate's belief as a Gamma over the rate per component-second.
struct Belief {
  double shape = 0, rate = 0;  //!< rate: per component-second of exposure
  double components = 0;
};

Belief belief_of(const FaultClass& f, double components) {
  const double r = f.rate.per_component_second;
  Belief b;
  b.components = components;
  const RateUncertainty* u = f.uncertainty ? &*f.uncertainty : nullptr;
  double mean = r, second = r * r;  // E[x], E[x^2]: the rate's, to be matched by a Gamma
  if (u && u->events) {
    const double a = *u->events + 0.5;  // Jeffreys' posterior, its median at the stated rate
    const double scale = r / boost::math::quantile(boost::math::gamma_distribution<double>(a), 0.5);
    mean = a * scale, second = a * (a + 1) * scale * scale;
  } else if (u && u->sigma) {
    const double s2 = *u->sigma * *u->sigma;
    mean = r * std::exp(s2 / 2), second = r * r * std::exp(2 * s2);
  }
  if (u && u->fleet_sigma > 0) {  // times the fleet's lognormal factor of median 1
    const double f2 = u->fleet_sigma * u->fleet_sigma;
    mean *= std::exp(f2 / 2), second *= std::exp(2 * f2);
  }
  const double variance = second - mean * mean;
  b.shape = variance > mean * mean * 1e-9 ? mean * mean / variance : 1e9;  // held exact: a Gamma that does not move
  b.rate = b.shape / std::max(mean, 1e-300);
  return b;
}

bool interrupts(Effect e) { return e == Effect::Crash || e == Effect::Hang || e == Effect::Sdc; }

double quantile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

RunForecast forecast_run(const Scenario& s, const JobSoFar& so_far, std::uint64_t seed, int draws) {
  RunForecast out;
  const double wall = std::max(so_far.wall_s, 0.0);
  auto seconds = [&](Category c) { return static_cast<double>(so_far.ledger.us[static_cast<std::size_t>(c)]) / 1e6; };
  const double productive = seconds(Category::Productive);
  out.goodput_to_date = wall > 0 ? productive / wall : 0;
  const double nodes = std::max(1, so_far.nodes);
  const double gpus = nodes * std::max(1, s.cluster.gpus_per_node);

  // Each class's posterior: the scenario's belief and the job's own count over its own exposure.
  std::vector<Belief> beliefs;
  long matched = 0;
  double weight = 0, recovery_s = 0;  // the scenario's mean time to get going again, by rate
  for (const FaultClass& f : s.faults) {
    if (!interrupts(f.effect) || is_network(f.rate.component)) continue;
    const double components = f.rate.component == Component::Gpu ? gpus : nodes;
    Belief b = belief_of(f, components);
    const auto seen = so_far.interruptions.find(f.name);
    const long k = seen == so_far.interruptions.end() ? 0 : seen->second;
    b.shape += static_cast<double>(k);
    b.rate += components * wall;
    matched += k;
    beliefs.push_back(b);
    const double r = f.rate.per_component_second * components;
    weight += r;
    recovery_s += r * static_cast<double>(f.detection_us + f.diagnosis_us + f.action_us) / 1e6;
  }
  for (const auto& [name, k] : so_far.interruptions) out.interruptions += k;
  if (out.interruptions > matched)  // classes the scenario lacks: Jeffreys' prior on the job's own count
    beliefs.push_back({0.5 + static_cast<double>(out.interruptions - matched), nodes * std::max(wall, 1.0), nodes});

  // What an interruption costs, and the saves' share: the job's own, with the scenario's as one's worth.
  const double interval_s = so_far.checkpoint_interval_s > 0 ? so_far.checkpoint_interval_s
                            : s.checkpoint_policy.kind == CheckpointPolicySpec::Kind::Fixed && s.checkpoint_policy.interval_us > 0
                                ? static_cast<double>(s.checkpoint_policy.interval_us) / 1e6
                                : 1800;
  const double restore_s = static_cast<double>(s.checkpoint.memory_restore_us > 0 ? s.checkpoint.memory_restore_us : s.checkpoint.restore_us.value_or(0)) / 1e6;
  const double expected_cost = interval_s / 2 + (weight > 0 ? recovery_s / weight : 0) + static_cast<double>(s.restart_overhead_us) / 1e6 + restore_s;
  const double spent = seconds(Category::LostProgress) + seconds(Category::Detection) + seconds(Category::Diagnosis) + seconds(Category::Restart) +
                       seconds(Category::CheckpointRestore) + seconds(Category::WaitingForSpares);
  out.cost_per_interruption_s = (spent + expected_cost) / (static_cast<double>(out.interruptions) + 1);
  const double save_s = static_cast<double>(s.checkpoint.save_us.value_or(0)) / 1e6;
  const double expected_share = save_s > 0 ? save_s / (interval_s + save_s) : 0;
  out.checkpoint_share = std::min(0.9, (seconds(Category::CheckpointSave) + expected_share * interval_s) / (wall + interval_s));

  // The rest of the run: the steps left at the job's own pace, else the horizon's time left.
  double work_s = 0, horizon_left_s = 0;
  if (so_far.total_steps > 0) {
    const double step_s = so_far.steps_done > 0 && productive > 0 ? productive / static_cast<double>(so_far.steps_done)
                                                                  : static_cast<double>(s.job.step_us) / 1e6;
    work_s = static_cast<double>(std::max<std::int64_t>(so_far.total_steps - so_far.steps_done, 0)) * step_s;
    out.by_steps = out.known = true;
  } else if (s.job.horizon_us) {
    horizon_left_s = std::max(0.0, static_cast<double>(*s.job.horizon_us) / 1e6 - wall);
    out.known = true;
  }

  Rng rng(splitmix64(seed ^ 0x464F524543415354ULL));  // "FORECAST"
  std::vector<double> rates, remaining, final_goodput;
  const double c = out.cost_per_interruption_s, keep = 1 - out.checkpoint_share;
  for (int i = 0; i < draws; ++i) {
    double per_s = 0;
    for (const Belief& b : beliefs) per_s += boost::random::gamma_distribution<double>(b.shape, 1 / b.rate)(rng) * b.components;
    rates.push_back(per_s * kDay);
    if (!out.known) continue;
    auto count = [&](double mean) {
      if (mean > 1e7) return std::max(0.0, std::round(mean + std::sqrt(mean) * boost::random::normal_distribution<double>()(rng)));
      return static_cast<double>(boost::random::poisson_distribution<long, double>(std::max(mean, 1e-12))(rng));
    };
    double t = 0, made = 0;
    if (out.by_steps) {
      const double pace = keep - per_s * c;  // productive seconds a wall second, on average
      if (pace <= 0.02) {
        t = kNeverS;
      } else {
        const double n = count(per_s * work_s / pace);
        t = std::min(kNeverS, (work_s + n * c) / keep);
      }
      made = t >= kNeverS ? 0 : work_s;
    } else {
      t = horizon_left_s;
      made = std::max(0.0, t * keep - count(per_s * t) * c);
    }
    remaining.push_back(t);
    final_goodput.push_back(wall + t > 0 ? (productive + made) / (wall + t) : out.goodput_to_date);
  }
  out.rate_per_day_p05 = quantile(rates, 0.05), out.rate_per_day_p50 = quantile(rates, 0.5), out.rate_per_day_p95 = quantile(rates, 0.95);
  if (out.known) {
    out.remaining_wall_s_p05 = quantile(remaining, 0.05), out.remaining_wall_s_p50 = quantile(remaining, 0.5);
    out.remaining_wall_s_p95 = quantile(remaining, 0.95);
    out.final_goodput_p05 = quantile(final_goodput, 0.05), out.final_goodput_p50 = quantile(final_goodput, 0.5);
    out.final_goodput_p95 = quantile(final_goodput, 0.95);
  }
  return out;
}

}  // namespace ctwin
