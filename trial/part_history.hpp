#pragma once
//! Each part's newest fault times, for escalation ("`after` faults on the same GPU within a
//! window"). A flat table with open addressing: a trial at 16k GPUs sees hundreds of parts fail a
//! month, and scanning a window's faults, or a node-based hash map's allocations, took a tenth of
//! its time. Allocation-free once grown. Only faults within the escalation's window can count, so
//! a part whose newest fault left the window is dropped when the table would grow: its size
//! follows the faults of one window, not every part a long trial at a million GPUs ever struck.

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace ctwin {

class PartHistory {
 public:
  //! Keeps the newest `keep` (≥ 1) times of each part, while its newest is within `window` of the
  //! latest add.
  PartHistory(int keep, Micros window) : keep_(std::max(1, keep)), window_(window) {}

  //! Adds a fault on `part` (≥ 0) at `t`, no earlier than the part's others. Returns how many
  //! times the part now keeps, and sets `oldest` to the oldest of them.
  int add(std::int64_t part, Micros t, Micros& oldest) {
    assert(part >= 0);
    if (2 * (used_ + 1) > static_cast<std::int64_t>(slots_.size())) rebuild(t);
    Slot& s = find(part);
    if (s.part < 0) {
      s = {part, static_cast<std::int64_t>(times_.size()), 0};
      times_.resize(times_.size() + static_cast<std::size_t>(keep_));
      ++used_;
    }
    Micros* times = times_.data() + s.offset;
    if (s.count == keep_) std::copy(times + 1, times + keep_, times), --s.count;
    times[s.count++] = t;
    oldest = times[0];
    return s.count;
  }
  //! Slots in the table (each part takes one, half of them at most in use).
  std::size_t capacity() const { return slots_.size(); }
  //! Forgets the part's faults (it escalated).
  void clear(std::int64_t part) { find(part).count = 0; }

 private:
  struct Slot {
    std::int64_t part = -1, offset = 0;
    int count = 0;
  };
  Slot& find(std::int64_t part) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = static_cast<std::size_t>(part * 0x9E3779B97F4A7C15ULL >> 17) & mask;
    while (slots_[i].part >= 0 && slots_[i].part != part) i = (i + 1) & mask;
    return slots_[i];
  }
  //! The part's newest time, or none (count 0: cleared).
  bool in_window(const Slot& s, Micros now) const {
    return s.count > 0 && times_[static_cast<std::size_t>(s.offset + s.count - 1)] >= now - window_;
  }
  //! Drops the parts out of the window, and doubles the table unless that freed most of it.
  void rebuild(Micros now) {
    std::int64_t live = 0;
    for (const Slot& s : slots_) live += s.part >= 0 && in_window(s, now) ? 1 : 0;
    const std::size_t size = std::max<std::size_t>(512, 4 * (live + 1) <= static_cast<std::int64_t>(slots_.size())
                                                            ? slots_.size() : 2 * slots_.size());
    std::vector<Slot> old(size);
    old.swap(slots_);
    std::vector<Micros> old_times;
    old_times.swap(times_);
    times_.reserve(static_cast<std::size_t>(live * keep_));
    used_ = 0;
    for (Slot s : old) {
      if (s.part < 0 || s.count == 0 || old_times[static_cast<std::size_t>(s.offset + s.count - 1)] < now - window_) continue;
      const auto from = old_times.begin() + s.offset;
      s.offset = static_cast<std::int64_t>(times_.size());
      times_.insert(times_.end(), from, from + keep_);
      find(s.part) = s;
      ++used_;
    }
  }
  int keep_;
  Micros window_;
  std::int64_t used_ = 0;
  std::vector<Slot> slots_;
  std::vector<Micros> times_;
};

}  // namespace ctwin
