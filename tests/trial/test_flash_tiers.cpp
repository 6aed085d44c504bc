// Flash checkpoint tiers: a persister slower than the snapshots skips to the newest one, as real
// persisters do, instead of queueing every snapshot behind the last.
#include <catch2/catch.hpp>

#include "trial/flash_tiers.hpp"

using namespace ctwin;

TEST_CASE("a persist slower than the snapshots skips to the newest: storage lags by three snapshots at most", "[flash]") {
  constexpr Micros s = kMicrosPerSecond;
  FlashTiers tiers({1, 700 * s, false, 0});
  Micros work = 0;
  for (int snapshot = 1; snapshot <= 2000; ++snapshot) {  // a snapshot every 610 s, 600 s of work each
    work += 600 * s;
    const Micros now = snapshot * 610 * s;
    tiers.record(now, work);
    tiers.settle(now);
    // The snapshot in flight, the one waiting and the newest: a queue of every snapshot would fall
    // 90 s further behind at each one (50 h after 2,000).
    REQUIRE(work - tiers.durable() <= 3 * 600 * s);
  }
  CHECK(tiers.durable() > 0);
}

TEST_CASE("a crash that takes a node's memory loses the persist in flight", "[flash]") {
  constexpr Micros s = kMicrosPerSecond;
  FlashTiers tiers({1, 100 * s, false, 0});
  tiers.record(10 * s, 5 * s);
  tiers.settle(110 * s);
  CHECK(tiers.durable() == 5 * s);
  tiers.record(200 * s, 9 * s);  // in flight until 300 s
  tiers.lose_in_flight();
  tiers.settle(1000 * s);
  CHECK(tiers.durable() == 5 * s);
}
