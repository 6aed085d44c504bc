#pragma once
//! Which checkpoint step a restart restores: one rule for a job of one node and of a thousand.

#include <cstdint>
#include <string>
#include <vector>

namespace ctwin::live {

//! A restart's restore: `step` is -1 to start fresh; `warning` is said when a bound left nothing.
struct RestoreChoice {
  std::int64_t step = -1;
  std::string warning;
};

//! The newest of `held` (the steps every rank holds complete) no later than `bound` (silent
//! corruption's newest clean step; -1: any). A bound that leaves nothing restarts from scratch, and says so.
RestoreChoice clean_restore_step(const std::vector<std::int64_t>& held, std::int64_t bound);

//! The newest of `steps` no later than `bound`; -1 when none (start fresh).
std::int64_t newest_at_most(const std::vector<std::int64_t>& steps, std::int64_t bound);
//! Said when a rollback to `bound` finds only later steps kept: it restarts from scratch. Names the
//! steps held and what to change (keep more checkpoints than the loss-spike confirmation spans).
std::string no_clean_step_text(std::int64_t bound, const std::vector<std::int64_t>& held);

}  // namespace ctwin::live
