#include "live/job/restore_step.hpp"

#include <algorithm>

namespace ctwin::live {

RestoreChoice clean_restore_step(const std::vector<std::int64_t>& held, std::int64_t bound) {
  RestoreChoice choice;
  for (const auto step : held)
    if (bound < 0 || step <= bound) choice.step = std::max(choice.step, step);
  if (choice.step < 0 && bound >= 0 && !held.empty()) choice.warning = no_clean_step_text(bound, held);
  return choice;
}

std::int64_t newest_at_most(const std::vector<std::int64_t>& steps, std::int64_t bound) {
  std::int64_t newest = -1;
  for (const auto step : steps)
    if (step <= bound) newest = std::max(newest, step);
  return newest;
}

std::string no_clean_step_text(std::int64_t bound, const std::vector<std::int64_t>& held) {
  const auto [oldest, newest] = std::minmax_element(held.begin(), held.end());
  return "no checkpoint at or before step " + std::to_string(bound) + " is kept (steps " + std::to_string(*oldest) + " to " +
         std::to_string(*newest) + " are, all past the loss spike's onset): the job restarts from scratch; keep more "
         "checkpoints (the engine's keep_last) than policies.loss_spike.confirm steps span";
}

}  // namespace ctwin::live
