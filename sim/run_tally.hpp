#pragma once
//! What a run keeps of its trials, taken in trial order as they finish: the sums behind every mean
//! a report gives, the summaries behind its intervals (OnlineSummary: exact up to 100,000 trials,
//! a sketch past that), and the first kKeptTrials trials whole (the JSON report's rows). Its memory
//! stops growing with the trials; `ctwin run --csv` streams every trial's row instead of keeping it.

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "core/ledger.hpp"
#include "models/scenario.hpp"
#include "sim/statistics.hpp"
#include "trial/trial.hpp"

namespace ctwin {

//! A trial's value of a compared metric; nullopt where it is undefined (no interruption).
std::optional<double> metric_of(const TrialResult& t, Comparison::Metric m);

class RunTally {
 public:
  static constexpr std::size_t kKeptTrials = 10'000;

  RunTally() = default;
  //! `classes`: the scenario's fault classes; `compared`: its published figures' metrics, in order.
  RunTally(std::size_t classes, std::vector<Comparison::Metric> compared, bool keep_goodputs);

  //! The next trial, in trial order (the same order gives the same sums, to the bit).
  void add(const TrialResult& t);

  std::size_t trials() const { return trials_; }
  double mean_ledger_hours(std::size_t category) const { return trials_ ? ledger_hours_[category] / static_cast<double>(trials_) : 0; }
  //! Over trials, a class's interruptions (the job stopped) or fault episodes per wall day.
  double interruptions_per_day(std::size_t fault_class) const { return mean_of(interruptions_per_day_[fault_class]); }
  double fault_episodes_per_day(std::size_t fault_class) const { return mean_of(episodes_per_day_[fault_class]); }
  Micros longest_wall_us() const { return longest_wall_us_; }
  const OnlineSummary& goodput() const { return goodput_; }
  const OnlineSummary& interruptions() const { return interruptions_; }
  //! Over the trials that finished their work; `unfinished` the others.
  const OnlineSummary& days_to_train() const { return days_to_train_; }
  std::size_t unfinished() const { return unfinished_; }
  //! The i-th published figure's metric over the trials where it is defined.
  const OnlineSummary& compared(std::size_t i) const { return compared_[i]; }
  //! The first kKeptTrials trials.
  const std::vector<TrialResult>& first_trials() const { return first_; }
  //! Every trial's goodput, in order, when asked for (pairing variants; a goodput percentile's trial).
  const std::vector<double>& goodputs() const { return goodputs_; }

 private:
  double mean_of(double sum) const { return trials_ ? sum / static_cast<double>(trials_) : 0; }

  std::size_t trials_ = 0;
  std::array<double, kCategoryCount> ledger_hours_{};
  std::vector<double> interruptions_per_day_, episodes_per_day_;
  Micros longest_wall_us_ = 0;
  OnlineSummary goodput_, interruptions_, days_to_train_;
  std::size_t unfinished_ = 0;
  std::vector<Comparison::Metric> metrics_;
  std::vector<OnlineSummary> compared_;
  std::vector<TrialResult> first_;
  bool keep_goodputs_ = false;
  std::vector<double> goodputs_;
};

}  // namespace ctwin
