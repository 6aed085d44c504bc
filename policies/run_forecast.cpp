#include "policies/run_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <boost/random/gamma_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <boost/random/uniform_01.hpp>

#include "core/rng.hpp"
#include "models/fault_timeline.hpp"
#include "policies/restart_path.hpp"

namespace ctwin {

namespace {

constexpr double kDay = 86400;
constexpr double kNeverS = 1e12;       //!< a run whose interruptions outpace its progress never ends
constexpr double kFewestDraws = 30;    //!< fewer effective draws than this: the belief is overruled

bool interrupts(Effect e) { return e == Effect::Crash || e == Effect::Hang || e == Effect::Sdc; }

double quantile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

RunForecaster::RunForecaster(const Scenario& scenario, int belief_draws, std::uint64_t seed) : scenario_(scenario) {
  double weight = 0;
  for (std::size_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultClass& f = scenario.faults[i];
    if (!interrupts(f.effect) || is_network(f.rate.component) || !(f.rate.per_component_second > 0)) continue;
    classes_.push_back({f.name, f.rate.per_component_second, f.rate.component == Component::Gpu, i});
    weight += f.rate.per_component_second;
    expected_recovery_s_ += f.rate.per_component_second * static_cast<double>(f.detection_us + f.diagnosis_us + f.action_us) / 1e6;
    // In-process restart and the warm standby cost what the scenario says for the classes they take.
    const RestartPath path = restart_path(scenario.restart, in_process_takes(scenario.restart, f, f.action, false));
    expected_restart_s_ += f.rate.per_component_second * static_cast<double>(restart_overhead_us(scenario.restart, scenario.restart_overhead_us, path)) / 1e6;
  }
  if (weight > 0) expected_recovery_s_ /= weight, expected_restart_s_ /= weight;
  else expected_restart_s_ = static_cast<double>(scenario.restart_overhead_us) / 1e6;
  // The scenario's own draws of its rates: a held-exact scenario has one, all ones.
  const FaultTimelineModel model = FaultTimelineModel::from(scenario);
  const int n = model.rates_uncertain() ? std::max(1, belief_draws) : 1;
  for (int d = 0; d < n; ++d) {
    const std::vector<double> all = model.rates_uncertain() ? model.rate_factors(trial_seed(seed, static_cast<std::uint64_t>(d)))
                                                            : std::vector<double>(scenario.faults.size(), 1.0);
    std::vector<double> mine;
    for (const Interrupting& c : classes_) mine.push_back(all[c.index]);
    factors_.push_back(std::move(mine));
  }
}

RunForecast RunForecaster::forecast(const JobSoFar& so_far, std::uint64_t seed, int draws) const {
  const Scenario& s = scenario_;
  RunForecast out;
  const double wall = std::max(so_far.wall_s, 0.0);
  auto seconds = [&](Category c) { return static_cast<double>(so_far.ledger.us[static_cast<std::size_t>(c)]) / 1e6; };
  const double productive = seconds(Category::Productive);
  out.goodput_to_date = wall > 0 ? productive / wall : 0;
  const double nodes = std::max(1, so_far.nodes);
  const double gpus = nodes * std::max(1, s.cluster.gpus_per_node);

  // Each draw of the belief weighed by the Poisson likelihood of the job's counts over its exposure.
  std::vector<double> count(classes_.size(), 0.0), components(classes_.size(), 0.0);
  long matched = 0;
  for (std::size_t c = 0; c < classes_.size(); ++c) {
    components[c] = classes_[c].per_gpu ? gpus : nodes;
    const auto seen = so_far.interruptions.find(classes_[c].name);
    if (seen != so_far.interruptions.end()) count[c] = static_cast<double>(seen->second), matched += seen->second;
  }
  for (const auto& [name, k] : so_far.interruptions) out.interruptions += k;
  std::vector<double> log_weight(factors_.size());
  for (std::size_t d = 0; d < factors_.size(); ++d) {
    double l = 0;
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const double per_s = classes_[c].rate_per_s * factors_[d][c] * components[c];
      l += count[c] * std::log(std::max(per_s, 1e-300)) - per_s * wall;
    }
    log_weight[d] = l;
  }
  const double top = *std::max_element(log_weight.begin(), log_weight.end());
  std::vector<double> cumulative;
  double total = 0, squares = 0;
  for (const double l : log_weight) {
    const double w = std::exp(l - top);
    total += w, squares += w * w;
    cumulative.push_back(total);
  }
  out.effective_draws = total * total / squares;
  out.belief_overruled = factors_.size() > 1 && out.effective_draws < kFewestDraws;
  const double unknown = static_cast<double>(out.interruptions - matched);  // classes the scenario lacks

  // What an interruption costs, and the saves' share: the job's own, with the scenario's as one's worth.
  const double interval_s = so_far.checkpoint_interval_s > 0 ? so_far.checkpoint_interval_s
                            : s.checkpoint_policy.kind == CheckpointPolicySpec::Kind::Fixed && s.checkpoint_policy.interval_us > 0
                                ? static_cast<double>(s.checkpoint_policy.interval_us) / 1e6
                                : 1800;
  const double restore_s =
      static_cast<double>(s.checkpoint.memory_restore_us > 0 ? s.checkpoint.memory_restore_us : s.checkpoint.restore_us.value_or(0)) / 1e6;
  const double expected_cost = interval_s / 2 + expected_recovery_s_ + expected_restart_s_ + restore_s;
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
  boost::random::uniform_01<double> uniform;
  auto gamma = [&](double shape, double rate) { return boost::random::gamma_distribution<double>(shape, 1 / rate)(rng); };
  std::vector<double> rates, remaining, final_goodput;
  const double c = out.cost_per_interruption_s, keep = 1 - out.checkpoint_share, exposure = std::max(wall, 1.0);
  for (int i = 0; i < draws; ++i) {
    double per_s = 0;
    if (out.belief_overruled) {  // each class from its own count (Jeffreys' prior)
      for (std::size_t k = 0; k < classes_.size(); ++k) per_s += gamma(count[k] + 0.5, components[k] * exposure) * components[k];
    } else {
      const double pick = uniform(rng) * total;
      const std::size_t d = std::min<std::size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), pick) - cumulative.begin(), factors_.size() - 1);
      for (std::size_t k = 0; k < classes_.size(); ++k) per_s += classes_[k].rate_per_s * factors_[d][k] * components[k];
    }
    if (unknown > 0) per_s += gamma(unknown + 0.5, nodes * exposure) * nodes;
    rates.push_back(per_s * kDay);
    if (!out.known) continue;
    auto interruptions = [&](double mean) {
      if (mean > 1e7) return std::max(0.0, std::round(mean + std::sqrt(mean) * boost::random::normal_distribution<double>()(rng)));
      return static_cast<double>(boost::random::poisson_distribution<long, double>(std::max(mean, 1e-12))(rng));
    };
    double t = 0, made = 0;
    if (out.by_steps) {
      const double pace = keep - per_s * c;  // productive seconds a wall second, on average
      t = pace <= 0.02 ? kNeverS : std::min(kNeverS, (work_s + interruptions(per_s * work_s / pace) * c) / keep);
      made = t >= kNeverS ? 0 : work_s;
    } else {
      t = horizon_left_s;
      made = std::max(0.0, t * keep - interruptions(per_s * t) * c);
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
