#include "sim/native_driver.hpp"

namespace ctwin {

TrialResult run_trial_native(const TrialConfig& config, const FaultTimelineModel& faults, std::uint64_t seed,
                             TrialObserver* observer) {
  FaultTimeline timeline(faults, seed);
  Trial trial(config, seed, observer);
  while (!trial.done()) {
    const Micros timer = trial.next_timer();
    if (timeline.peek().time < timer) trial.on_fault(timeline.pop());
    else trial.on_timer(timer);
  }
  return trial.result();
}

}  // namespace ctwin
