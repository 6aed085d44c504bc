#pragma once
//! When to checkpoint. Engine-neutral: the simulator's trial and the live controller ask the same
//! object. v1 has the fixed interval; Young, Daly and adaptive policies arrive with the policy library.

#include <memory>

#include "models/scenario.hpp"

namespace ctwin {

class CheckpointPolicy {
 public:
  virtual ~CheckpointPolicy() = default;
  //! Compute time (failure-free work) between the end of one save and the start of the next.
  virtual Micros interval_us() const = 0;
};

class FixedIntervalPolicy final : public CheckpointPolicy {
 public:
  explicit FixedIntervalPolicy(Micros interval_us) : interval_us_(interval_us) {}
  Micros interval_us() const override { return interval_us_; }

 private:
  Micros interval_us_;
};

//! Builds the policy a scenario's `policies.checkpoint` section names.
std::unique_ptr<CheckpointPolicy> make_checkpoint_policy(const CheckpointPolicySpec& spec);

}  // namespace ctwin
