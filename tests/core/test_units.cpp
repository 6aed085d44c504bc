// Human units in scenario files parse to SI values, and bad ones say what to write instead.
#include <catch2/catch.hpp>

#include "core/units.hpp"

using namespace ctwin;

TEST_CASE("durations, sizes, bandwidths and rates parse to SI units", "[units]") {
  std::string why;
  CHECK(*parse_duration_s("10min", why) == 600);
  CHECK(*parse_duration_s("2h", why) == 7200);
  CHECK(*parse_duration_s("54d", why) == 54 * 86400);
  CHECK(*parse_duration_s("1.5 s", why) == 1.5);
  CHECK(*parse_bytes("2.5GiB", why) == 2.5 * 1024 * 1024 * 1024);
  CHECK(*parse_bytes("568MB", why) == 568e6);
  CHECK(*parse_bandwidth_bytes_per_s("400Gbps", why) == 50e9);
  CHECK(*parse_bandwidth_bytes_per_s("50GB/s", why) == 50e9);
  CHECK(*parse_flops("989TFLOP/s", why) == 989e12);
  auto rate = parse_rate("0.17/gpu-year", why);
  REQUIRE(rate);
  CHECK(rate->component == Component::Gpu);
  CHECK(rate->per_component_second == Approx(0.17 / (365 * 86400.0)));
  CHECK(parse_rate("2/node-day", why)->component == Component::Node);
}

TEST_CASE("bad units are rejected with a reason", "[units]") {
  std::string why;
  CHECK_FALSE(parse_duration_s("10 parsecs", why));
  CHECK(why.find("unknown duration unit") != std::string::npos);
  CHECK_FALSE(parse_duration_s("-5min", why));
  CHECK(why.find("negative") != std::string::npos);
  CHECK_FALSE(parse_bytes("lots", why));
  CHECK(why.find("expected a number") != std::string::npos);
  CHECK_FALSE(parse_bandwidth_bytes_per_s("400GB", why));  // a size, not a bandwidth
  CHECK_FALSE(parse_rate("0.1/year", why));
  CHECK(why.find("per component") != std::string::npos);
}

TEST_CASE("integer microseconds round to the nearest microsecond", "[units]") {
  CHECK(seconds_to_micros(1.0) == 1'000'000);
  CHECK(seconds_to_micros(0.1) == 100'000);
  CHECK(seconds_to_micros(54 * 86400.0) == 4'665'600'000'000LL);
}
