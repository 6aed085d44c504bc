#pragma once
//! Run-time health policies, engine-neutral.
//!  - Straggler eviction: robust z-scores of per-node step times (median and MAD); a synchronous
//!    job runs at its slowest rank, so evicting the slowest saves (its step - the next slowest) on
//!    every remaining step; evict when that beats the cost of a restart.
//!  - Hang detection: the timeout is a safety factor (5, as NVIDIA's resiliency extension) times
//!    the longest interval seen between heartbeats.
//!  - Loss spikes: silent corruption seen late. The onset is the first of a run of losses far above
//!    the recent ones; the checkpoints saved since then are not clean (the simulator's SDC path).

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

namespace ctwin {

struct StragglerDecision {
  int node = -1;
  double robust_z = 0;        //!< 0.6745 (t - median) / MAD
  double seconds_saved = 0;   //!< over the remaining steps, if evicted
  bool evict = false;
};

//! nullopt when no node's robust z exceeds `z_threshold`. With `group_of` (node -> its pipeline
//! stage or role), each node is compared with its own group only, and evicting it saves its time
//! beyond its group's next slowest.
std::optional<StragglerDecision> runtime_straggler(const std::map<int, double>& step_time_s, double remaining_steps,
                                                   double restart_cost_s, double z_threshold = 3.5,
                                                   const std::map<int, int>& group_of = {});

class HangDetector {
 public:
  explicit HangDetector(double safety_factor = 5, double minimum_timeout_s = 60)
      : factor_(safety_factor), minimum_s_(minimum_timeout_s) {}
  void observe_interval(double seconds) { longest_s_ = seconds > longest_s_ ? seconds : longest_s_; }
  double timeout_s() const { return factor_ * longest_s_ > minimum_s_ ? factor_ * longest_s_ : minimum_s_; }
  bool is_hung(double silent_for_s) const { return silent_for_s > timeout_s(); }

 private:
  double factor_, minimum_s_, longest_s_ = 0;
};

//! Watches a trainer's loss, step by step. A loss above median + z x 1.4826 MAD of the last
//! `window` losses (and above `ratio` x that median) is high; `confirm` high losses in a row are a
//! spike, whose onset is the first of them. One high batch is noise; a run of them is corruption.
class LossSpikeWatch {
 public:
  explicit LossSpikeWatch(std::size_t window = 50, double z = 6, double ratio = 1.5, int confirm = 8)
      : window_(window), z_(z), ratio_(ratio), confirm_(confirm) {}
  //! The spike's onset step, once confirmed (then the watch starts over); nullopt otherwise.
  std::optional<std::int64_t> observe(std::int64_t step, double loss);
  void restart() { recent_.clear(), high_ = 0, onset_ = -1; }

 private:
  std::size_t window_;
  double z_, ratio_;
  int confirm_;
  std::deque<double> recent_;
  int high_ = 0;
  std::int64_t onset_ = -1;
};

}  // namespace ctwin
