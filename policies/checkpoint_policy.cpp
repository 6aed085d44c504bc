#include "policies/checkpoint_policy.hpp"

#include <cmath>
#include <stdexcept>

namespace ctwin {

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

}  // namespace ctwin
