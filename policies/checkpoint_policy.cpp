#include "policies/checkpoint_policy.hpp"

#include <stdexcept>

namespace ctwin {

std::unique_ptr<CheckpointPolicy> make_checkpoint_policy(const CheckpointPolicySpec& spec) {
  if (spec.type == "fixed") return std::make_unique<FixedIntervalPolicy>(spec.interval_us);
  throw std::invalid_argument("unknown checkpoint policy: " + spec.type);  // the loader rejects it first
}

}  // namespace ctwin
