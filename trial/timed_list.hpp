#pragma once
//! Things due at a time (a recurrence, a silent corruption's detection, a straggler check, a
//! replica's rejoin), kept in the order they came and taken in that order once due, with the
//! earliest time kept beside them: the trial's timer reads it at every event, which had scanned
//! every list each time (at a million GPUs, hundreds of pending recurrences).

#include <algorithm>
#include <optional>
#include <vector>

#include "core/units.hpp"

namespace ctwin {

template <class T, Micros T::*At>
class TimedList {
 public:
  bool empty() const { return items_.empty(); }
  //! `*changed` is set whenever the list changes (a cache of its earliest time, its owner's).
  void notify(bool* changed) { changed_ = changed; }
  //! The earliest time due, kNever when empty.
  Micros next() const { return next_; }
  void push(const T& item) {
    items_.push_back(item);
    next_ = std::min(next_, item.*At);
    if (changed_) *changed_ = true;
  }
  //! The first item, in the order they came, due by `t`; removed.
  std::optional<T> take_due(Micros t) {
    if (next_ > t) return std::nullopt;
    const auto due = std::find_if(items_.begin(), items_.end(), [t](const T& item) { return item.*At <= t; });
    const T item = *due;
    items_.erase(due);
    refresh();
    return item;
  }
  template <class Pred>
  void erase_if(Pred&& pred) {
    items_.erase(std::remove_if(items_.begin(), items_.end(), pred), items_.end());
    refresh();
  }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  void refresh() {
    if (changed_) *changed_ = true;
    next_ = kNever;
    for (const T& item : items_) next_ = std::min(next_, item.*At);
  }
  std::vector<T> items_;
  Micros next_ = kNever;
  bool* changed_ = nullptr;
};

}  // namespace ctwin
