#pragma once
//! Each part's newest fault times, for escalation ("`after` faults on the same GPU within a
//! window"). A flat table with open addressing: a trial at 16k GPUs sees hundreds of parts fail a
//! month, and scanning a window's faults, or a node-based hash map's allocations, took a tenth of
//! its time. Allocation-free once grown.

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

#include "core/units.hpp"

namespace ctwin {

class PartHistory {
 public:
  //! Keeps the newest `keep` (≥ 1) times of each part.
  explicit PartHistory(int keep) : keep_(std::max(1, keep)) {}

  //! Adds a fault on `part` (≥ 0) at `t`, no earlier than the part's others. Returns how many
  //! times the part now keeps, and sets `oldest` to the oldest of them.
  int add(std::int64_t part, Micros t, Micros& oldest) {
    assert(part >= 0);
    if (2 * (used_ + 1) > static_cast<std::int64_t>(slots_.size())) grow();
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
  void grow() {
    std::vector<Slot> old(std::max<std::size_t>(512, 2 * slots_.size()));
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.part >= 0) find(s.part) = s;
  }
  int keep_;
  std::int64_t used_ = 0;
  std::vector<Slot> slots_;
  std::vector<Micros> times_;
};

}  // namespace ctwin
