// Always-on invariants: a broken one throws with its name, the condition and where; its detail is
// only computed when it breaks.
#include <catch2/catch.hpp>

#include "core/invariant.hpp"

using namespace ctwin;

TEST_CASE("invariant: a broken one names itself, its condition and its place, a kept one costs its detail nothing", "[invariant]") {
  int details = 0;
  auto detail = [&] {
    ++details;
    return std::string("7 us charged, 8 us marked");
  };
  const long charged = 7, marked = 8;
  CHECK_NOTHROW(CTWIN_INVARIANT_DETAIL(charged <= marked, "the ledger never runs ahead of the clock", detail()));
  CHECK(details == 0);
  try {
    CTWIN_INVARIANT_DETAIL(charged == marked, "the ledger's categories add up to the wall time", detail());
    FAIL("a broken invariant went by");
  } catch (const InvariantBroken& e) {
    const std::string what = e.what();
    CHECK(what.find("invariant broken: the ledger's categories add up to the wall time") == 0);
    CHECK(what.find("(charged == marked, core/test_invariant.cpp:") != std::string::npos);
    CHECK(what.find("7 us charged, 8 us marked") != std::string::npos);
    CHECK(what.find("a bug in ctwin") != std::string::npos);
  }
  CHECK(details == 1);
  CHECK_THROWS_AS(CTWIN_INVARIANT(1 + 1 == 3, "arithmetic"), InvariantBroken);
}
