#pragma once
//! Nodes in the order they joined, with membership, insertion and removal in O(1): a list whose
//! removed entries go stale in place (a stamp per node says which entry is live), compacted when
//! most of it is stale. A trial whose recoveries never complete keeps adding to it; scanning it
//! at each removal had made a million-GPU trial's cost grow with the cluster. Membership is a bit
//! a node, so asking of a node not in it (most asks) stays in cache.

#include <cstdint>
#include <utility>
#include <vector>

namespace ctwin {

class OrderedNodeSet {
 public:
  bool contains(int node) const {
    const auto n = static_cast<std::size_t>(node);
    return n < member_.size() && member_[n];
  }
  std::size_t size() const { return live_; }
  //! Adds `node` at the end; a node already in keeps its place.
  void insert(int node) {
    if (contains(node)) return;
    const auto n = static_cast<std::size_t>(node);
    if (n >= member_.size()) {
      member_.resize(n + 1, false);
      stamps_.resize(n + 1, 0);
    }
    member_[n] = true;
    stamps_[n] = ++next_stamp_;
    entries_.emplace_back(node, next_stamp_);
    ++live_;
  }
  void erase(int node) {
    if (!contains(node)) return;
    member_[static_cast<std::size_t>(node)] = false;
    --live_;
    if (entries_.size() > 64 && live_ < entries_.size() / 4) compact();
  }
  //! `f(node)` for each node, in the order they joined.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [node, stamp] : entries_)
      if (live(node, stamp)) f(node);
  }
  void clear() {
    for (const auto& entry : entries_) member_[static_cast<std::size_t>(entry.first)] = false;
    entries_.clear();
    live_ = 0;
  }

 private:
  bool live(int node, std::uint32_t stamp) const { return contains(node) && stamps_[static_cast<std::size_t>(node)] == stamp; }
  void compact() {
    std::vector<std::pair<int, std::uint32_t>> kept;
    kept.reserve(live_);
    for (const auto& entry : entries_)
      if (live(entry.first, entry.second)) kept.push_back(entry);
    entries_.swap(kept);
  }
  std::vector<std::pair<int, std::uint32_t>> entries_;  //!< (node, its stamp when it joined)
  std::vector<bool> member_;                            //!< by node
  std::vector<std::uint32_t> stamps_;                   //!< by node: its newest entry's stamp
  std::uint32_t next_stamp_ = 0;
  std::size_t live_ = 0;
};

}  // namespace ctwin
