#include "support/scripted.hpp"

#include <algorithm>

namespace ctwin::test {

bool Scripted::has(EventKind kind) const { return count(kind) > 0; }

int Scripted::count(EventKind kind) const {
  return static_cast<int>(std::count_if(events.begin(), events.end(), [kind](const RunEvent& e) { return e.kind == kind; }));
}

Scripted run_scripted(const TrialConfig& config, const std::vector<FaultStrike>& strikes, std::uint64_t seed) {
  EventRecorder log;
  Trial trial(config, seed, &log);
  std::size_t next = 0;
  while (!trial.done()) {
    const Micros timer = trial.next_timer();
    const Micros fault = next < strikes.size() ? strikes[next].time : kNever;
    if (fault < timer) trial.on_fault(strikes[next++]);
    else trial.on_timer(timer);
  }
  Scripted out{trial.result(), std::move(log.events), {}};
  for (int slot = 0; slot < config.job_nodes; ++slot) out.slots.push_back(trial.node_in_slot(slot));
  return out;
}

}  // namespace ctwin::test
