// A policy in simulation: the adaptive interval converging to Young's value.
#include <catch2/catch.hpp>

#include "policies/checkpoint_policy.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/native_driver.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

namespace {
//! Passes the adaptive policy's answers through, keeping the last one.
class Recording final : public IntervalPolicy {
 public:
  explicit Recording(std::shared_ptr<const IntervalPolicy> inner) : inner_(std::move(inner)) {}
  Micros interval_us(const IntervalContext& c) const override { return last_ = inner_->interval_us(c); }
  mutable Micros last_ = 0;

 private:
  std::shared_ptr<const IntervalPolicy> inner_;
};
}  // namespace

TEST_CASE("in simulation, the adaptive interval converges to Young's value under a stationary rate", "[policies]") {
  // Crashes every 2 h on average, a 10 s save; the prior believes 20 h. Young: sqrt(2 x 10 x 7200) = 379 s.
  nlohmann::json doc = test::renewal_scenario(7200, 600, 10, 60, 4000.0 * 3600);
  doc["policies"]["checkpoint"] = {{"type", "adaptive"}, {"mtbf", "20h"}, {"prior_weight", 1}};
  const Scenario scenario = test::scenario_from(doc);
  TrialConfig config = make_trial_config(scenario, resolve_checkpoint_costs(scenario));
  REQUIRE(config.interval_policy);
  auto recording = std::make_shared<Recording>(config.interval_policy);
  config.interval_policy = recording;
  const FaultTimelineModel faults = FaultTimelineModel::from(scenario);
  const double young = young_interval_s(10, 7200);
  CHECK(micros_to_seconds(recording->interval_us({0, 0, 10 * kMicrosPerSecond, 0})) > 2.5 * young);  // the prior's answer
  for (std::uint64_t seed : {1, 2, 3}) {
    const TrialResult r = run_trial_native(config, faults, seed);
    CHECK(r.interruptions > 1500);
    CHECK(micros_to_seconds(recording->last_) == Approx(young).epsilon(0.05));
  }
}
