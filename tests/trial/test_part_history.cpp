// Escalation's memory of each part's newest faults: the table keeps `after` times a part, in order,
// through growth, forgets a part that escalated, and drops parts whose faults left the window.
#include <catch2/catch.hpp>

#include "trial/part_history.hpp"

using namespace ctwin;

TEST_CASE("part history keeps each part's newest times through growth", "[escalation]") {
  PartHistory history(2, kNever / 2);
  Micros oldest = -1;
  for (std::int64_t part = 0; part < 5000; ++part) CHECK(history.add(part * 256 + 3, 10 * part, oldest) == 1);
  CHECK(history.add(42 * 256 + 3, 100'000, oldest) == 2);
  CHECK(oldest == 420);  // the part's first, kept across rehashes
  CHECK(history.add(42 * 256 + 3, 100'001, oldest) == 2);
  CHECK(oldest == 100'000);  // only the newest two
  history.clear(42 * 256 + 3);
  CHECK(history.add(42 * 256 + 3, 100'002, oldest) == 1);
  CHECK(oldest == 100'002);
  CHECK(history.add(4999 * 256 + 3, 200'000, oldest) == 2);
  CHECK(oldest == 49'990);
}

TEST_CASE("part history drops parts out of the window and stays small", "[escalation]") {
  const Micros window = 1000;
  PartHistory history(3, window);
  Micros oldest = -1;
  // A million parts struck once each, 10 us apart: only the last window's hundred can still count.
  for (std::int64_t part = 0; part < 1'000'000; ++part) history.add(part, 10 * part, oldest);
  CHECK(history.capacity() <= 1024);
  // A part within the window keeps its time; one out of it starts again (it could not escalate).
  const Micros now = 10 * 999'999;
  CHECK(history.add(999'990, now + 1, oldest) == 2);
  CHECK(oldest == 10 * 999'990);
  CHECK(history.add(5, now + 2, oldest) == 1);
  CHECK(oldest == now + 2);
}
