#pragma once
//! What a run keeps of its trials, taken in trial order as they finish: the sums behind every mean
//! a report gives, the summaries behind its intervals (OnlineSummary: exact up to 100,000 trials,
//! a sketch past that), and the first kKeptTrials trials whole (the JSON report's rows). Its memory
//! stops growing with the trials; `ctwin run --csv` streams every trial's row instead of keeping it.
//! Asked for, it also keeps every goodput (8 bytes a trial) and the lowest 5% of trials' ledgers
//! (about 120 bytes each): the report's tail.

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

//! A trial's ledger, kept for the report's tail (RunTally::lowest_trials).
struct LowTrial {
  double goodput = 0;
  int index = 0;  //!< in the order the tally took it
  Micros wall_us = 0;
  Ledger ledger;
};

class RunTally {
 public:
  static constexpr std::size_t kKeptTrials = 10'000;

  RunTally() = default;
  //! `classes`: the scenario's fault classes; `compared`: its published figures' metrics, in order;
  //! `lowest`: how many of the lowest-goodput trials to keep the ledgers of (the tail's).
  RunTally(std::size_t classes, std::vector<Comparison::Metric> compared, bool keep_goodputs, std::size_t lowest = 0);

  //! Room for `trials` goodputs and the lowest trials, so neither grows by copying itself.
  void reserve(std::size_t trials);
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
  //! The `lowest` trials by goodput (ties: the lower index kept), in no order: a low quantile's
  //! ledgers without running its trials again (the worst trials are the dearest to run).
  const std::vector<LowTrial>& lowest_trials() const { return low_; }

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
  std::size_t lowest_ = 0;
  std::vector<LowTrial> low_;  //!< a max-heap by (goodput, index) of at most lowest_
};

}  // namespace ctwin
