// The fault timeline draws faults at the configured rates, from the right components.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include <boost/math/special_functions/gamma.hpp>

#include "models/fault_timeline.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

namespace {

Scenario two_classes() {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"] = nlohmann::json::array();
  doc["faults"].push_back({{"name", "gpu"}, {"rate", "1/gpu-year"}, {"effect", "crash"}, {"detection", "0s"},
                           {"recovery", {{"action", "restart"}, {"duration", "0s"}}}});
  doc["faults"].push_back({{"name", "node"}, {"rate", "0.01/node-day"}, {"effect", "crash"}, {"detection", "0s"},
                           {"recovery", {{"action", "restart"}, {"duration", "0s"}}}});
  doc.erase("spares");
  return test::scenario_from(doc);
}

}  // namespace

TEST_CASE("exponential faults arrive at rate x components, split by class, on valid victims", "[timeline]") {
  const Scenario s = two_classes();  // 8 job nodes x 8 GPUs
  const FaultTimelineModel model = FaultTimelineModel::from(s);
  FaultTimeline timeline(model, 1234);
  const double years = 2000;
  const Micros end = seconds_to_micros(years * 365 * 86400);
  std::vector<double> counts(2, 0);
  std::vector<int> per_slot(8, 0);
  for (FaultStrike f = timeline.pop(); f.time < end; f = timeline.pop()) {
    counts[f.fault_class] += 1;
    REQUIRE(f.slot >= 0);
    REQUIRE(f.slot < 8);
    if (f.fault_class == 0) REQUIRE((f.gpu >= 0 && f.gpu < 8));
    else REQUIRE(f.gpu == -1);
    ++per_slot[static_cast<std::size_t>(f.slot)];
  }
  const double expected_gpu = 64 * years, expected_node = 8 * 0.01 * 365 * years;
  // Poisson counts: within 4 standard deviations.
  CHECK(std::abs(counts[0] - expected_gpu) < 4 * std::sqrt(expected_gpu));
  CHECK(std::abs(counts[1] - expected_node) < 4 * std::sqrt(expected_node));
  // Victims spread evenly over the nodes: chi-square with 7 degrees of freedom, below its 99.9% point.
  const double total = counts[0] + counts[1], mean = total / 8;
  double chi2 = 0;
  for (int c : per_slot) chi2 += (c - mean) * (c - mean) / mean;
  CHECK(chi2 < 24.3);
}

TEST_CASE("Weibull clocks renew per component with the configured mean and shape", "[timeline]") {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["job"]["nodes"] = 1;
  doc["faults"][0] = {{"name", "wear"}, {"rate", "1/node-year"}, {"distribution", "weibull"}, {"weibull_shape", 0.7},
                      {"effect", "crash"}, {"detection", "0s"}, {"recovery", {{"action", "restart"}, {"duration", "0s"}}}};
  doc.erase("spares");
  const Scenario s = test::scenario_from(doc);
  const FaultTimelineModel model = FaultTimelineModel::from(s);
  FaultTimeline timeline(model, 77);
  const double mean_s = 365 * 86400.0;
  const double scale = mean_s / boost::math::tgamma(1 + 1 / 0.7);
  const int n = 20000;
  double previous = 0, sum = 0;
  int early = 0;
  for (int i = 0; i < n; ++i) {
    const double t = micros_to_seconds(timeline.pop().time);
    const double gap = t - previous;
    previous = t;
    sum += gap;
    early += gap < 0.1 * mean_s;
  }
  CHECK(sum / n == Approx(mean_s).epsilon(0.03));
  const double expected_early = 1 - std::exp(-std::pow(0.1 * mean_s / scale, 0.7));
  CHECK(early / static_cast<double>(n) == Approx(expected_early).epsilon(0.05));
}

TEST_CASE("the same seed gives the same timeline", "[timeline]") {
  const Scenario s = two_classes();
  const FaultTimelineModel model = FaultTimelineModel::from(s);
  FaultTimeline a(model, 5), b(model, 5), c(model, 6);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const FaultStrike x = a.pop(), y = b.pop(), z = c.pop();
    REQUIRE(x.time == y.time);
    REQUIRE(x.slot == y.slot);
    differs |= x.time != z.time;
  }
  CHECK(differs);
}

TEST_CASE("first lives of many Weibull parts end as the distribution says, each part once", "[timeline]") {
  // 512 GPUs, shape 0.5, mean 10 years; replacements come back only after 100 years, so within the
  // first year every failure is a first life: the count is Binomial(512, F(1 year)).
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["job"]["nodes"] = 64;
  doc["cluster"]["nodes"] = 66;
  doc["faults"][0] = {{"name", "infant"}, {"rate", "0.1/gpu-year"}, {"distribution", "weibull"}, {"weibull_shape", 0.5},
                      {"effect", "crash"}, {"detection", "0s"}, {"recovery", {{"action", "restart"}, {"duration", "100y"}}}};
  doc.erase("spares");
  const Scenario s = test::scenario_from(doc);
  const FaultTimelineModel model = FaultTimelineModel::from(s);
  const double scale_years = 10 / boost::math::tgamma(1 + 1 / 0.5);
  const double p = 1 - std::exp(-std::pow(1.0 / scale_years, 0.5));
  const Micros one_year = seconds_to_micros(365 * 86400.0);
  double total = 0;
  const int runs = 200;
  for (int seed = 0; seed < runs; ++seed) {
    FaultTimeline timeline(model, static_cast<std::uint64_t>(seed));
    std::set<std::pair<int, int>> seen;
    for (FaultStrike f = timeline.pop(); f.time < one_year; f = timeline.pop()) {
      REQUIRE(seen.insert({f.slot, f.gpu}).second);  // no part's first life ends twice
      total += 1;
    }
  }
  const double expected = runs * 512 * p, sd = std::sqrt(runs * 512 * p * (1 - p));
  INFO("first-year failures " << total << ", expected " << expected << " +- " << sd);
  CHECK(std::abs(total - expected) < 4 * sd);
}

TEST_CASE("lognormal times to failure renew per part with the configured mean and sigma", "[timeline]") {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["job"]["nodes"] = 1;
  doc["faults"][0] = {{"name", "wear"}, {"rate", "1/node-year"}, {"distribution", "lognormal"}, {"lognormal_sigma", 0.8},
                      {"effect", "crash"}, {"detection", "0s"}, {"recovery", {{"action", "restart"}, {"duration", "0s"}}}};
  doc.erase("spares");
  const Scenario s = test::scenario_from(doc);
  const FaultTimelineModel model = FaultTimelineModel::from(s);
  FaultTimeline timeline(model, 99);
  const double mean_s = 365 * 86400.0, median_s = mean_s * std::exp(-0.8 * 0.8 / 2);
  const int n = 20000;
  double previous = 0, sum = 0;
  int below_median = 0;
  for (int i = 0; i < n; ++i) {
    const double t = micros_to_seconds(timeline.pop().time);
    sum += t - previous;
    below_median += (t - previous) < median_s;
    previous = t;
  }
  CHECK(sum / n == Approx(mean_s).epsilon(0.03));
  CHECK(below_median / static_cast<double>(n) == Approx(0.5).epsilon(0.04));
  doc["faults"][0].erase("lognormal_sigma");
  CHECK_THROWS_WITH(test::scenario_from(doc, "l.json"), Catch::Contains("l.json: /faults/0/lognormal_sigma: missing"));
}
