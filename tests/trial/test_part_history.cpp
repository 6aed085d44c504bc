// Escalation's memory of each part's newest faults: the table keeps `after` times a part, in order,
// through growth, and forgets a part that escalated.
#include <catch2/catch.hpp>

#include "trial/part_history.hpp"

using namespace ctwin;

TEST_CASE("part history keeps each part's newest times through growth", "[escalation]") {
  PartHistory history(2);
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
