// The trial's bookkeeping that keeps a million-GPU trial's cost per event flat (issue 52): each
// structure gives what the plain list or heap it replaced gave, in the same order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "trial/ordered_node_set.hpp"
#include "trial/return_queue.hpp"
#include "trial/timed_list.hpp"

using namespace ctwin;

TEST_CASE("ordered node set keeps join order through removals and compaction", "[trial][unit]") {
  OrderedNodeSet set;
  std::vector<int> reference;  // the plain list it replaced
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const int node = static_cast<int>(rng() % 300);
    if (rng() % 3 == 0) {
      set.erase(node);
      reference.erase(std::remove(reference.begin(), reference.end(), node), reference.end());
    } else {
      set.insert(node);
      if (std::find(reference.begin(), reference.end(), node) == reference.end()) reference.push_back(node);
    }
    CHECK(set.contains(node) == (std::find(reference.begin(), reference.end(), node) != reference.end()));
    if (step % 997 == 0) {
      std::vector<int> seen;
      set.for_each([&](int n) { seen.push_back(n); });
      REQUIRE(seen == reference);
      set.clear();
      reference.clear();
    }
  }
  CHECK(set.size() == reference.size());
}

TEST_CASE("return queue gives nodes in (time, node) order, batches or not, and expedites repairs", "[trial][unit]") {
  ReturnQueue queue;
  std::vector<std::tuple<Micros, int, bool>> reference;
  std::mt19937 rng(11);
  // Batches at one time (a diagnosis's departures), nodes in any order, and times out of order.
  for (int batch = 0; batch < 200; ++batch) {
    const Micros at = 1000 * static_cast<Micros>(rng() % 50);
    for (int k = 0, n = 1 + static_cast<int>(rng() % 8); k < n; ++k) {
      const int node = static_cast<int>(rng() % 1000);
      const bool repair = rng() % 2 == 0;
      queue.push(at, node, repair);
      reference.emplace_back(at, node, repair);
    }
  }
  CHECK(queue.next() == std::get<0>(*std::min_element(reference.begin(), reference.end())));
  // Repairs due after 30 ms come at 30 ms.
  queue.expedite_repairs(30'000);
  for (auto& [at, node, repair] : reference)
    if (repair && at > 30'000) at = 30'000;
  std::sort(reference.begin(), reference.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<int> taken, expected;
  for (Micros t = 0; t <= 50'000; t += 7'000) {
    queue.take(t, [&](int node) { taken.push_back(node); });
    for (const auto& [at, node, repair] : reference)
      if (at <= t && at > t - 7'000) expected.push_back(node);
    REQUIRE(taken == expected);
  }
  CHECK(queue.empty());
  CHECK(queue.next() == kNever);
}

namespace {
struct Due {
  Micros at;
  int id;
};
}  // namespace

TEST_CASE("timed list keeps its earliest time and takes the due ones in the order they came", "[trial][unit]") {
  TimedList<Due, &Due::at> list;
  CHECK(list.next() == kNever);
  list.push({50, 0});
  list.push({20, 1});
  list.push({20, 2});
  list.push({90, 3});
  CHECK(list.next() == 20);
  std::vector<int> taken;
  while (const auto d = list.take_due(50)) taken.push_back(d->id);
  CHECK(taken == std::vector<int>{0, 1, 2});  // push order among the due, not time order
  CHECK(list.next() == 90);
  list.erase_if([](const Due& d) { return d.id == 3; });
  CHECK(list.empty());
  CHECK(list.next() == kNever);
}
