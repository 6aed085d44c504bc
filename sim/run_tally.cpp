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

RunTally::RunTally(std::size_t classes, std::vector<Comparison::Metric> compared, bool keep_goodputs)
    : interruptions_per_day_(classes, 0.0),
      episodes_per_day_(classes, 0.0),
      metrics_(std::move(compared)),
      compared_(metrics_.size()),
      keep_goodputs_(keep_goodputs) {}

void RunTally::add(const TrialResult& t) {
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
