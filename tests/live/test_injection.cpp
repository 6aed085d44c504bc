// The precheck's injected faults, parsed in one place: each command takes its subset, with a range
// for each value, and names the spellings it takes when given another.
#include <catch2/catch.hpp>

#include "live/precheck/injection.hpp"

using ctwin::live::Injection;
using ctwin::live::injection_choices;
using ctwin::live::parse_injection;
using Kind = Injection::Kind;

TEST_CASE("injection: each command's subset, values in range, and the same text back", "[live][precheck]") {
  const auto all = {Kind::Slow, Kind::Delay, Kind::Noisy, Kind::Stuck, Kind::Hang, Kind::Corrupt, Kind::Memory};
  const auto slow = parse_injection("slow=5", all);
  REQUIRE(slow);
  CHECK(slow->kind == Kind::Slow);
  CHECK(slow->value == 5);
  CHECK(slow->text() == "slow=5");
  CHECK(parse_injection("noisy=0.25", all)->text() == "noisy=0.25");
  CHECK(parse_injection("stuck", all)->kind == Kind::Stuck);
  CHECK(parse_injection("memory=0.5", all)->value == 0.5);
  for (const char* bad : {"slow=1", "slow=0.5", "slow=", "slow=5x", "slow", "stuck=1", "memory=1.5", "memory=0", "delay=-1",
                          "delay=nan", "wobbly", ""})
    CHECK_FALSE(parse_injection(bad, all));
  // The agent's precheck takes no hang (that is the CPU precheck's rank-level fault), the CPU precheck no delay.
  CHECK_FALSE(parse_injection("hang", {Kind::Slow, Kind::Delay, Kind::Noisy, Kind::Stuck}));
  CHECK_FALSE(parse_injection("delay=1", {Kind::Slow, Kind::Hang, Kind::Corrupt, Kind::Memory}));
  CHECK(injection_choices({Kind::Slow, Kind::Delay, Kind::Stuck}) == "slow=F, delay=S or stuck");
  CHECK(injection_choices({Kind::Hang}) == "hang");
}
