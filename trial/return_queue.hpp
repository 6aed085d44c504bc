#pragma once
//! The nodes on their way back to the spare pool, each due at a time, taken in (time, node) order.
//! A diagnosis sends its nodes away together, so most come back in batches due at one time (a
//! repair of fixed length): a batch is one entry of the heap, and a batch's nodes are ordered when
//! it comes due. At a million GPUs one heap entry per node (65,000 of them) had cost a quarter of
//! a trial in sifting.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/units.hpp"

namespace ctwin {

class ReturnQueue {
 public:
  bool empty() const { return heap_.empty(); }
  //! The earliest time a node is due, kNever when none.
  Micros next() const { return next_; }
  //! `node` is due at `at`; `repair`: from the repair shop (it may be expedited).
  void push(Micros at, int node, bool repair) {
    if (open_ < 0 || open_at_ != at) {
      open_ = static_cast<std::int64_t>(new_batch());
      open_at_ = at;
      heap_.push_back({at, static_cast<std::uint32_t>(open_)});
      std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
      next_ = heap_.front().at;
    }
    batches_[static_cast<std::size_t>(open_)].push_back({node, repair});
  }
  //! The nodes due by `t`, `f(node)` for each in (time, node) order. Whether any was.
  template <class F>
  bool take(Micros t, F&& f) {
    bool any = false;
    while (!heap_.empty() && heap_.front().at <= t) {
      const Micros at = heap_.front().at;
      due_.clear();
      while (!heap_.empty() && heap_.front().at == at) {
        const std::uint32_t index = heap_.front().index;
        std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
        heap_.pop_back();
        auto& batch = batches_[index];
        due_.insert(due_.end(), batch.begin(), batch.end());
        batch.clear();
        free_.push_back(index);
        if (open_ == static_cast<std::int64_t>(index)) open_ = -1;
      }
      std::sort(due_.begin(), due_.end(), [](const Entry& a, const Entry& b) { return a.node < b.node; });
      for (const Entry& e : due_) f(e.node);
      any = true;
    }
    next_ = heap_.empty() ? kNever : heap_.front().at;
    return any;
  }
  //! Every node from the repair shop is due by `by` at the latest.
  void expedite_repairs(Micros by) {
    std::vector<std::pair<Micros, Entry>> all;
    bool moved = false;
    for (const Batch& b : heap_)
      for (const Entry& e : batches_[b.index]) {
        moved |= e.repair && b.at > by;
        all.push_back({e.repair && b.at > by ? by : b.at, e});
      }
    if (!moved) return;
    heap_.clear();
    next_ = kNever;
    batches_.clear();
    free_.clear();
    open_ = -1;
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [at, e] : all) push(at, e.node, e.repair);
  }

 private:
  struct Entry {
    int node;
    bool repair;
  };
  struct Batch {
    Micros at;
    std::uint32_t index;  //!< in batches_
    bool operator>(const Batch& o) const { return at != o.at ? at > o.at : index > o.index; }
  };
  std::size_t new_batch() {
    if (free_.empty()) {
      batches_.emplace_back();
      return batches_.size() - 1;
    }
    const std::uint32_t index = free_.back();
    free_.pop_back();
    return index;
  }
  std::vector<Batch> heap_;                 //!< a min-heap (std::greater): the earliest batch at the front
  std::vector<std::vector<Entry>> batches_;  //!< by index; a free one is empty, its capacity kept
  std::vector<std::uint32_t> free_;
  std::int64_t open_ = -1;  //!< the batch the last push went to, while it waits
  Micros open_at_ = 0;
  std::vector<Entry> due_;  //!< the nodes one take orders
  Micros next_ = kNever;    //!< the heap's front, kept: the trial's timer reads it at every event
};

}  // namespace ctwin
