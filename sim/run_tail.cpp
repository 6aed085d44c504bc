#include "sim/run_tail.hpp"

#include "sim/monte_carlo.hpp"

namespace ctwin {

void LedgerShares::add(const Ledger& ledger, Micros wall) {
  ++trials;
  for (std::size_t c = 0; c < kCategoryCount; ++c) us[c] += static_cast<double>(ledger.us[c]);
  wall_us += static_cast<double>(wall);
}

std::size_t LedgerShares::largest_loss() const {
  std::size_t largest = kCategoryCount;
  for (std::size_t c = 0; c < kCategoryCount; ++c)
    if (c != static_cast<std::size_t>(Category::Productive) && us[c] > 0 && (largest == kCategoryCount || us[c] > us[largest])) largest = c;
  return largest;
}

TailTrials tail_trials(const std::vector<double>& goodputs, double p5) {
  TailTrials out;
  if (goodputs.empty()) return out;
  out.p5_run = trial_at_goodput_quantile(goodputs, 0.05);
  out.median_run = trial_at_goodput_quantile(goodputs, 0.5);
  for (std::size_t i = 0; i < goodputs.size(); ++i) {
    const int index = static_cast<int>(i);
    if (goodputs[i] <= p5 || index == out.p5_run || index == out.median_run) out.indices.push_back(index);
  }
  return out;
}

void add_to_tail(RunTail& tail, const TailTrials& which, int index, const Ledger& ledger, Micros wall_us, double goodput) {
  if (goodput <= tail.p5) tail.at_or_below_p5.add(ledger, wall_us);
  if (index == which.p5_run) tail.p5_run.add(ledger, wall_us), tail.p5_run.trial = index;
  if (index == which.median_run) tail.median_run.add(ledger, wall_us), tail.median_run.trial = index;
}

}  // namespace ctwin
