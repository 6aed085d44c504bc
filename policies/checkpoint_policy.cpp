#include "policies/checkpoint_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "models/network_domains.hpp"

namespace ctwin {

double implied_job_mtbf_s(const Scenario& s) {
  double rate = 0;  // interruptions per second
  for (const auto& f : s.faults) {
    const bool stops = f.effect == Effect::Crash || f.effect == Effect::Hang || f.effect == Effect::Sdc ||
                       (f.effect == Effect::Flap && f.action_us >= f.detection_us);
    if (stops) rate += f.rate.per_component_second * static_cast<double>(component_count(s, f));
  }
  return rate > 0 ? 1 / rate : 1e12;
}

double young_interval_s(double save_s, double mtbf_s) { return std::sqrt(2 * save_s * mtbf_s); }

double daly_interval_s(double save_s, double mtbf_s) {
  if (save_s >= 2 * mtbf_s) return mtbf_s;
  const double x = save_s / (2 * mtbf_s);
  return std::sqrt(2 * save_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - save_s;
}

Micros YoungPolicy::interval_us(const IntervalContext& c) const {
  return seconds_to_micros(young_interval_s(micros_to_seconds(c.save_us), mtbf_s_));
}

Micros DalyPolicy::interval_us(const IntervalContext& c) const {
  return seconds_to_micros(daly_interval_s(micros_to_seconds(c.save_us), mtbf_s_));
}

double AdaptivePolicy::estimated_mtbf_s(const IntervalContext& c) const {
  return (prior_weight_ * prior_mtbf_s_ + micros_to_seconds(c.now_us)) / (prior_weight_ + static_cast<double>(c.failures_seen));
}

Micros AdaptivePolicy::interval_us(const IntervalContext& c) const {
  return seconds_to_micros(daly_interval_s(micros_to_seconds(c.save_us), estimated_mtbf_s(c)));
}

std::unique_ptr<IntervalPolicy> make_checkpoint_policy(const CheckpointPolicySpec& spec, double job_mtbf_s) {
  const double mtbf_s = spec.mtbf_us ? micros_to_seconds(*spec.mtbf_us) : job_mtbf_s;
  switch (spec.kind) {
    case CheckpointPolicySpec::Kind::Fixed: return std::make_unique<FixedIntervalPolicy>(spec.interval_us);
    case CheckpointPolicySpec::Kind::Young: return std::make_unique<YoungPolicy>(mtbf_s);
    case CheckpointPolicySpec::Kind::Daly: return std::make_unique<DalyPolicy>(mtbf_s);
    case CheckpointPolicySpec::Kind::Adaptive: return std::make_unique<AdaptivePolicy>(mtbf_s, spec.prior_weight);
  }
  throw std::invalid_argument("unknown checkpoint policy");
}

std::int64_t steps_per_interval(double interval_s, double step_s) {
  if (!(step_s > 0) || !(interval_s > 0)) return 1;
  return std::clamp<std::int64_t>(std::llround(interval_s / step_s), 1, std::int64_t{1} << 40);
}

bool CheckpointCadence::saves_at(std::int64_t step, std::int64_t default_every) const {
  for (auto it = changes.rbegin(); it != changes.rend(); ++it)
    if (step >= it->from) return it->every > 0 && (step - it->from) % it->every == 0;
  return default_every > 0 && step % default_every == 0;
}

std::optional<CadenceChange> next_cadence(const CheckpointCadence& current, std::int64_t every, std::int64_t step, std::int64_t lead_steps,
                                          double hysteresis, std::int64_t last_save) {
  if (every < 1) return std::nullopt;
  const CadenceChange* now = current.changes.empty() ? nullptr : &current.changes.back();
  if (now && std::abs(static_cast<double>(every - now->every)) <= hysteresis * static_cast<double>(now->every)) return std::nullopt;
  std::int64_t earliest = std::max<std::int64_t>(step, 0) + std::max<std::int64_t>(lead_steps, 1);
  if (now) earliest = std::max(earliest, now->from + 1);
  if (last_save >= 0) {
    const std::int64_t counted = last_save + every;  // the simulator's: an interval after the last save
    // No save of the current rule comes before it (before any change the trainer's own holds, unknown here).
    const bool first = !now || (last_save >= now->from && now->every > 0 && counted <= last_save + now->every);
    if (counted >= earliest && first) return CadenceChange{counted, every};
  }
  if (now && now->every > 0 && earliest > now->from) {  // on the current rule's phase: no extra save
    const std::int64_t behind = earliest - now->from;
    return CadenceChange{now->from + (behind + now->every - 1) / now->every * now->every, every};
  }
  return CadenceChange{earliest, every};
}

void CheckpointCadence::add(const CadenceChange& change) {
  changes.push_back(change);
  if (changes.size() > kKept) changes.erase(changes.begin());
  ++revision;
}

}  // namespace ctwin
