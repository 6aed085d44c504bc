#pragma once
//! A trial driven by hand, for the trial tier's tests: `strikes` (in time order) merged with the
//! trial's own timer, as the native driver does.

#include <vector>

#include "trial/trial.hpp"

namespace ctwin::test {

//! What a scripted trial gives: its result, every event, and the node in each slot at the end.
struct Scripted {
  TrialResult result;
  std::vector<RunEvent> events;
  std::vector<int> slots;
  bool has(EventKind kind) const;
  int count(EventKind kind) const;
};
Scripted run_scripted(const TrialConfig& config, const std::vector<FaultStrike>& strikes, std::uint64_t seed = 0);

}  // namespace ctwin::test
