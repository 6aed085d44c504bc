#pragma once
//! What a run's low quantiles are made of: for the runs at or below the goodput p5, the single p5
//! run and the median run, where their wall time went, by ledger category. The tally keeps each
//! trial's goodput and the lowest 5%'s ledgers; a trial the tally did not keep (the median run past
//! its first 10,000, a tie it let go) is run again by index (a trial draws from its own seed).

#include <array>
#include <cstddef>
#include <vector>

#include "core/ledger.hpp"
#include "trial/trial.hpp"

namespace ctwin {

//! Ledger totals of a set of trials, and their shares of its wall time.
struct LedgerShares {
  std::size_t trials = 0;
  int trial = -1;  //!< a single run's index
  std::array<double, kCategoryCount> us{};
  double wall_us = 0;

  void add(const Ledger& ledger, Micros wall_us);
  double share(std::size_t category) const { return wall_us > 0 ? us[category] / wall_us : 0; }
  double goodput() const { return share(static_cast<std::size_t>(Category::Productive)); }
  //! The category, productive aside, that took the largest share (kCategoryCount when none took any).
  std::size_t largest_loss() const;
};

struct RunTail {
  double p5 = 0;                 //!< goodput p5 (type 7, as the report's)
  std::size_t run_trials = 0;
  LedgerShares at_or_below_p5;   //!< every run whose goodput is at or below p5
  LedgerShares p5_run;           //!< the run at the 5th percentile (nearest rank)
  LedgerShares median_run;       //!< the run at the median (nearest rank)
};

//! The trials a tail needs (indices into `goodputs`, ascending), with the p5 and median runs'.
struct TailTrials {
  std::vector<int> indices;
  int p5_run = -1, median_run = -1;
};
TailTrials tail_trials(const std::vector<double>& goodputs, double p5);

//! Takes trial `index`'s ledger (in ascending index order) into the tail's groups.
void add_to_tail(RunTail& tail, const TailTrials& which, int index, const Ledger& ledger, Micros wall_us, double goodput);

}  // namespace ctwin
