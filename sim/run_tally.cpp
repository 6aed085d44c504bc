#include "sim/run_tally.hpp"

#include <algorithm>

#include "core/units.hpp"

namespace ctwin {

std::optional<double> metric_of(const TrialResult& t, Comparison::Metric m) {
  switch (m) {
    case Comparison::Metric::Goodput: return goodput(t);
    case Comparison::Metric::InterruptionsPerDay:
      return t.wall_us > 0 ? static_cast<double>(t.interruptions) / micros_to_days(t.wall_us) : 0.0;
    case Comparison::Metric::Interruptions: return static_cast<double>(t.interruptions);
    case Comparison::Metric::LostHoursPerInterruption:
      if (t.interruptions == 0) return std::nullopt;
      return micros_to_hours(t.ledger[Category::LostProgress]) / static_cast<double>(t.interruptions);
  }
  return std::nullopt;
}

namespace {

//! Max-heap order: the highest goodput, then the highest index, on top (evicted first).
bool lower(const LowTrial& a, const LowTrial& b) { return a.goodput != b.goodput ? a.goodput < b.goodput : a.index < b.index; }

}  // namespace

RunTally::RunTally(std::size_t classes, std::vector<Comparison::Metric> compared, bool keep_goodputs, std::size_t lowest)
    : interruptions_per_day_(classes, 0.0),
      episodes_per_day_(classes, 0.0),
      metrics_(std::move(compared)),
      compared_(metrics_.size()),
      keep_goodputs_(keep_goodputs),
      lowest_(lowest) {}

void RunTally::reserve(std::size_t trials) {
  if (keep_goodputs_) goodputs_.reserve(trials);
  low_.reserve(std::min(lowest_, trials) + 1);
}

void RunTally::add(const TrialResult& t) {
  if (lowest_ > 0) {
    const LowTrial low{ctwin::goodput(t), static_cast<int>(trials_), t.wall_us, t.ledger};
    if (low_.size() < lowest_ || lower(low, low_.front())) {
      low_.push_back(low);
      std::push_heap(low_.begin(), low_.end(), lower);
      if (low_.size() > lowest_) {
        std::pop_heap(low_.begin(), low_.end(), lower);
        low_.pop_back();
      }
    }
  }
  ++trials_;
  for (std::size_t c = 0; c < kCategoryCount; ++c) ledger_hours_[c] += micros_to_hours(t.ledger.us[c]);
  if (t.wall_us > 0)
    for (std::size_t f = 0; f < interruptions_per_day_.size() && f < t.fault_counts.size(); ++f) {
      interruptions_per_day_[f] += static_cast<double>(t.interruptions_by_class[f]) / micros_to_days(t.wall_us);
      episodes_per_day_[f] += static_cast<double>(t.fault_counts[f]) / micros_to_days(t.wall_us);
    }
  longest_wall_us_ = std::max(longest_wall_us_, t.wall_us);
  goodput_.add(ctwin::goodput(t));
  interruptions_.add(static_cast<double>(t.interruptions));
  if (t.finished_work) days_to_train_.add(micros_to_days(t.wall_us));
  else ++unfinished_;
  for (std::size_t i = 0; i < metrics_.size(); ++i)
    if (const auto v = metric_of(t, metrics_[i])) compared_[i].add(*v);
  if (first_.size() < kKeptTrials) first_.push_back(t);
  if (keep_goodputs_) goodputs_.push_back(ctwin::goodput(t));
}

}  // namespace ctwin
