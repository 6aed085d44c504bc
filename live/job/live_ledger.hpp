#pragma once
//! The live run's ledger: the supervisor charges each stretch of wall time, from the previous mark
//! to now, to one category, so the categories add up to the wall time to the microsecond, as the
//! simulator's do (core/ledger.hpp). Productive time of steps a restore rolled back is moved to
//! lost progress when the restore names its step.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>

#include "core/invariant.hpp"
#include "core/ledger.hpp"

namespace ctwin::live {

class LiveLedger {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LiveLedger(Clock::time_point start) : start_(start) { productive_at_step_[-1] = 0; }

  Micros at(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - start_).count();
  }
  Micros marked() const { return mark_; }
  //! Time 0 moves to `start` (a restarted master goes on with its journal's wall clock).
  void rebase(Clock::time_point start) { start_ = start; }
  //! The clock's time of a ledger time (the inverse of at()).
  Clock::time_point time_of(Micros us) const { return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(us)); }
  //! Charges (previous mark, t] to `c`; a t before the mark charges nothing.
  void charge(Category c, Clock::time_point t) { charge_until(c, at(t)); }
  void charge_until(Category c, Micros until) {
    if (until <= mark_) return;
    ledger_[c] += until - mark_;
    mark_ = until;
    adds_up();
  }
  //! Charges `first_us` of the stretch to `first` (at most all of it), the rest to `rest`.
  void split(Category first, Micros first_us, Category rest, Clock::time_point t) {
    const Micros until = at(t);
    charge_until(first, std::min(until, mark_ + std::max<Micros>(first_us, 0)));
    charge_until(rest, until);
  }

  //! A step finished: remember how much productive time it took to get there.
  void step_done(std::int64_t step) {
    productive_at_step_.erase(productive_at_step_.upper_bound(step), productive_at_step_.end());
    productive_at_step_[step] = ledger_[Category::Productive];
  }
  //! The trainer restored `step`: productive time since then was lost. Returns the seconds moved.
  double rolled_back_to(std::int64_t step) {
    auto it = productive_at_step_.upper_bound(step);
    const Micros kept = it == productive_at_step_.begin() ? 0 : std::prev(it)->second;
    const Micros lost = std::max<Micros>(ledger_[Category::Productive] - kept, 0);
    ledger_[Category::Productive] -= lost;
    ledger_[Category::LostProgress] += lost;
    rolled_back_us_ += lost;
    productive_at_step_.erase(it, productive_at_step_.end());
    productive_at_step_[step] = ledger_[Category::Productive];
    adds_up();
    return static_cast<double>(lost) / 1e6;
  }

  //! `us` of the productive time charged since step `since` was `to` after all (a slowdown confirmed
  //! late): moved, with what the steps from `since` on count as productive.
  void reclassify_productive(std::int64_t since, Micros us, Category to) {
    us = std::clamp<Micros>(us, 0, ledger_[Category::Productive]);
    ledger_[Category::Productive] -= us;
    ledger_[to] += us;
    for (auto it = productive_at_step_.lower_bound(since); it != productive_at_step_.end(); ++it) it->second = std::max<Micros>(it->second - us, 0);
    adds_up();
  }

  const Ledger& ledger() const { return ledger_; }
  //! Productive time moved to lost progress by restores, in all: a counter that never decreases.
  Micros rolled_back_us() const { return rolled_back_us_; }

  //! What a restarted owner (the job master, from its journal) needs to go on where it stopped.
  struct Saved {
    Ledger ledger;
    Micros mark = 0, rolled_back_us = 0;
    std::map<std::int64_t, Micros> productive_at_step;
  };
  Saved saved() const { return {ledger_, mark_, rolled_back_us_, productive_at_step_}; }
  //! `s` must add up (the journal's reader checks it: a journal is outside input).
  void resume(const Saved& s) {
    ledger_ = s.ledger;
    mark_ = s.mark;
    rolled_back_us_ = s.rolled_back_us;
    productive_at_step_ = s.productive_at_step;
    if (productive_at_step_.empty()) productive_at_step_[-1] = 0;
    adds_up();
  }

 private:
  //! Every microsecond up to the mark is in exactly one category (core/invariant.hpp).
  void adds_up() const {
    CTWIN_INVARIANT_DETAIL(ledger_.total() == mark_, "the live ledger's categories add up to the wall time",
                           std::to_string(ledger_.total()) + " us charged, " + std::to_string(mark_) + " us marked");
  }
  Clock::time_point start_;
  Micros mark_ = 0, rolled_back_us_ = 0;
  Ledger ledger_;
  std::map<std::int64_t, Micros> productive_at_step_;
};

}  // namespace ctwin::live
