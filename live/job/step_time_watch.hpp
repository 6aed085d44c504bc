#pragma once
//! A node's step times against its own baseline. A synchronous job runs at its slowest part, so
//! steps that stay slower than the baseline (a throttled GPU, a flapping link, a noisy neighbour)
//! are degraded time in the ledger, as the simulator's slow faults are. The baseline is a rolling
//! median of the node's normal steps; the state changes on the median of a short window that stays
//! above it for a while, with hysteresis, so one slow step (a checkpoint's page faults) or a few
//! noisy ones are not a slowdown. The first steps of every start and restart are a warm-up (a
//! restored state's page faults, caches, ranks catching up with each other): they are not watched,
//! so a restart is never also degraded time (their time beyond the baseline is the restart's).

#include <algorithm>
#include <deque>
#include <vector>

namespace ctwin::live {

class StepTimeWatch {
 public:
  enum class Change { None, SlowBegin, SlowEnd };

  //! `baseline_steps` normal steps make the first baseline; it then follows the median of the last
  //! `baseline_span` normal steps (a job's steps drift; a slowdown's do not count). A slowdown begins
  //! when the median of `window` steps stays above `begin_ratio` x the baseline for `confirm` steps
  //! in a row (noise, a data-loader stall, one slow save are not one), and ends below `end_ratio`.
  explicit StepTimeWatch(std::size_t baseline_steps = 10, std::size_t window = 5, double begin_ratio = 1.25, double end_ratio = 1.1,
                         std::size_t warmup_steps = 5, std::size_t confirm = 10, std::size_t baseline_span = 100)
      : baseline_steps_(baseline_steps), window_(window), warmup_(warmup_steps), confirm_(std::max<std::size_t>(confirm, 1)),
        span_(std::max(baseline_span, baseline_steps)), begin_(begin_ratio), end_(end_ratio), warming_(warmup_steps) {}

  Change observe(double step_s) {
    if (warming_ > 0) {
      --warming_;
      return Change::None;
    }
    if (baseline_s_ == 0) {
      normal_.push_back(step_s);
      if (normal_.size() == baseline_steps_) baseline_s_ = median(normal_);
      return Change::None;
    }
    recent_.push_back(step_s);
    if (recent_.size() > window_) recent_.pop_front();
    if (!slow_ && step_s <= begin_ * baseline_s_) {  // a normal step: the baseline follows it
      normal_.push_back(step_s);
      if (normal_.size() > span_) normal_.pop_front();
      baseline_s_ = median(normal_);
    }
    if (recent_.size() < window_) return Change::None;
    const double m = median(recent_);
    if (!slow_) {
      above_ = m > begin_ * baseline_s_ ? above_ + 1 : 0;
      if (above_ >= confirm_) return slow_ = true, above_ = 0, speed_ = baseline_s_ / m, Change::SlowBegin;
    } else if (m < end_ * baseline_s_) {
      return slow_ = false, speed_ = 1, Change::SlowEnd;
    }
    return Change::None;
  }
  //! After a restart the window starts again, after a warm-up (the baseline stays: the node is the same).
  void restarted() {
    recent_.clear();
    above_ = 0;
    warming_ = warmup_;
  }

  bool slow() const { return slow_; }
  //! Not slow yet, but the window has been above the begin ratio (a slowdown being confirmed).
  bool pending() const { return !slow_ && above_ > 0; }
  //! The next step observed is one of a start's warm-up.
  bool warming() const { return warming_ > 0; }
  double baseline_s() const { return baseline_s_; }
  double speed() const { return speed_; }  //!< baseline / the window's median when the slowdown began

 private:
  template <class Steps>
  static double median(const Steps& steps) {
    std::vector<double> v(steps.begin(), steps.end());
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }
  std::size_t baseline_steps_, window_, warmup_, confirm_, span_;
  double begin_, end_;
  std::size_t warming_;    //!< steps of this start's warm-up still to pass over
  std::size_t above_ = 0;  //!< window medians above the begin ratio in a row
  std::deque<double> normal_;
  std::deque<double> recent_;
  double baseline_s_ = 0, speed_ = 1;
  bool slow_ = false;
};

}  // namespace ctwin::live
