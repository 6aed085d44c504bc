// A rate with a trend in time (issue 37, item 4): a power law in the class's intensity
// (Crow-AMSAA), read with its errors by pointer, and drawn by the fault timeline so that the counts
// over a trial follow the law (unit tier).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/fault_timeline.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using nlohmann::json;

namespace {

json minimal_with(const json& trend) {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["trend"] = trend;
  return doc;
}

using test::says_at;

std::vector<ScenarioProblem> problems_of(const json& doc) { return test::load_problems(doc); }

}  // namespace

TEST_CASE("rate trend: read with its errors by JSON pointer", "[models]") {
  const Scenario s = test::scenario_from(minimal_with({{"shape", 1.5}, {"age", "90d"}, {"source", "unit test"}}));
  REQUIRE(s.faults[0].trend);
  CHECK(s.faults[0].trend->shape == 1.5);
  CHECK(s.faults[0].trend->age_us == 90LL * 86400 * 1'000'000);
  CHECK(says_at(problems_of(minimal_with({{"shape", 20}, {"age", "90d"}})), "/faults/0/trend/shape", "between 0.1 and 10"));
  CHECK(says_at(problems_of(minimal_with({{"shape", 1.5}})), "/faults/0/trend/age", "missing"));
  CHECK(says_at(problems_of(minimal_with({{"shape", 1.5}, {"age", "0s"}})), "/faults/0/trend/age", ""));
  CHECK(says_at(problems_of(minimal_with({{"shape", 1.5}, {"age", "9d"}, {"slope", 1}})), "/faults/0/trend/slope", "unknown field"));
  CHECK(says_at(problems_of(minimal_with("rising")), "/faults/0/trend", "expected an object"));
  json weibull = minimal_with({{"shape", 1.5}, {"age", "90d"}});
  weibull["faults"][0]["distribution"] = "weibull";
  weibull["faults"][0]["weibull_shape"] = 0.7;
  CHECK(says_at(problems_of(weibull), "/faults/0/trend", "only an exponential class"));
}

TEST_CASE("rate trend: the timeline's counts follow the power law, rising or falling, from the rate given at the start", "[models]") {
  // The job's 64 GPUs at 0.5/GPU-year: 32 a year at the start. Over 30 days, the law gives
  // r a / b (((a + T) / a)^b - 1) faults: with a = 30 days, b = 2: 3 x r T / 2 (half as many
  // again as without a trend); b = 0.5: 0.83 x r T. And the second half of the span holds
  // ((2a)^b - (1.5a)^b) / ((1.5a)^b - a^b) times the first half's.
  const double per_year = 0.5 * 64, span_days = 30, age_days = 30;
  for (const double b : {2.0, 0.5}) {
    DYNAMIC_SECTION("shape " << b) {
      const Scenario s = test::scenario_from(minimal_with({{"shape", b}, {"age", "30d"}}));
      const FaultTimelineModel model = FaultTimelineModel::from(s);
      const Micros span = static_cast<Micros>(span_days * 86400e6), half = span / 2;
      const double r = per_year / (365.0 * 86400e6);  // per microsecond, the whole class
      const double a = age_days * 86400e6;
      const double expected = r * a / b * (std::pow(1 + static_cast<double>(span) / a, b) - 1);
      CHECK(model.expected_strikes(span) == Approx(expected).epsilon(1e-9));
      double first = 0, second = 0;
      const int trials = 4000;
      for (int t = 0; t < trials; ++t) {
        FaultTimeline timeline(model, 1000 + static_cast<std::uint64_t>(t));
        for (FaultStrike f = timeline.pop(); f.time < span; f = timeline.pop()) (f.time < half ? first : second) += 1;
      }
      const double mean = (first + second) / trials;  // about 3.9 (b = 2) or 2.2 (b = 0.5): 4,000 trials pin it to ~1 %
      CHECK(mean == Approx(expected).epsilon(0.04));
      const double ratio = (std::pow(2.0, b) - std::pow(1.5, b)) / (std::pow(1.5, b) - 1);
      CHECK(second / first == Approx(ratio).epsilon(0.06));
    }
  }
}
