#pragma once
//! A node's step times against its own baseline. A synchronous job runs at its slowest part, so
//! steps that stay slower than the baseline (a throttled GPU, a flapping link, a noisy neighbour)
//! are degraded time in the ledger, as the simulator's slow faults are. The baseline is the median
//! of the first steps; the state changes on the median of a short window, with hysteresis, so one
//! slow step (a checkpoint's page faults) is not a slowdown. The first steps of every start and
//! restart are a warm-up (a restored state's page faults, caches, ranks catching up with each
//! other): they are not watched, so a restart is never also degraded time.

#include <algorithm>
#include <deque>
#include <vector>

namespace ctwin::live {

class StepTimeWatch {
 public:
  enum class Change { None, SlowBegin, SlowEnd };

  explicit StepTimeWatch(std::size_t baseline_steps = 10, std::size_t window = 5, double begin_ratio = 1.25, double end_ratio = 1.1,
                         std::size_t warmup_steps = 5)
      : baseline_steps_(baseline_steps), window_(window), warmup_(warmup_steps), begin_(begin_ratio), end_(end_ratio),
        warming_(warmup_steps) {}

  Change observe(double step_s) {
    if (warming_ > 0) {
      --warming_;
      return Change::None;
    }
    if (baseline_s_ == 0) {
      first_.push_back(step_s);
      if (first_.size() == baseline_steps_) baseline_s_ = median(first_);
      return Change::None;
    }
    recent_.push_back(step_s);
    if (recent_.size() > window_) recent_.pop_front();
    if (recent_.size() < window_) return Change::None;
    const double m = median(std::vector<double>(recent_.begin(), recent_.end()));
    if (!slow_ && m > begin_ * baseline_s_) return slow_ = true, speed_ = baseline_s_ / m, Change::SlowBegin;
    if (slow_ && m < end_ * baseline_s_) return slow_ = false, speed_ = 1, Change::SlowEnd;
    return Change::None;
  }
  //! After a restart the window starts again, after a warm-up (the baseline stays: the node is the same).
  void restarted() {
    recent_.clear();
    warming_ = warmup_;
  }

  bool slow() const { return slow_; }
  double baseline_s() const { return baseline_s_; }
  double speed() const { return speed_; }  //!< baseline / the window's median when the slowdown began

 private:
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  std::size_t baseline_steps_, window_, warmup_;
  double begin_, end_;
  std::size_t warming_;  //!< steps of this start's warm-up still to pass over
  std::vector<double> first_;
  std::deque<double> recent_;
  double baseline_s_ = 0, speed_ = 1;
  bool slow_ = false;
};

}  // namespace ctwin::live
