// Rates that carry their uncertainty (issue 37, item 1): read with their errors by pointer, and a
// trial's factor drawn per class, the same for every variant of a sweep.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "core/rng.hpp"
#include "models/fault_timeline.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using nlohmann::json;

namespace {

std::vector<ScenarioProblem> problems_with(const json& uncertainty) {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["rate_uncertainty"] = uncertainty;
  return test::load_problems(doc);
}

bool says(const std::vector<ScenarioProblem>& problems, const std::string& pointer, const std::string& part) {
  return test::says_at(problems, pointer, part);
}

Scenario with_uncertainty(const json& uncertainty) {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["rate_uncertainty"] = uncertainty;
  return test::scenario_from(doc);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("rate uncertainty: the evidence or a spread, each checked where it is read", "[scenario]") {
  const std::string at = "/faults/0/rate_uncertainty";
  CHECK(problems_with({{"events", 148}, {"exposure", "884736 gpu-days"}}).empty());
  CHECK(problems_with({{"sigma", 0.7}, {"source", "two fleets differ by 2x"}}).empty());
  CHECK(says(problems_with({{"events", 148}}), at + "/exposure", "missing"));
  CHECK(says(problems_with({{"events", 148}, {"exposure", "884736 node-days"}}), at + "/exposure", "is of nodes, the rate of gpus"));
  CHECK(says(problems_with({{"events", 148}, {"exposure", "884736 gpu-fortnights"}}), at + "/exposure", "unknown exposure unit"));
  CHECK(says(problems_with({{"events", -1}, {"exposure", "10 gpu-days"}}), at + "/events", "a count from 0"));
  CHECK(says(problems_with({{"events", 3}, {"exposure", "10 gpu-days"}, {"sigma", 0.5}}), at + "/sigma", "not both"));
  CHECK(says(problems_with(json::object()), at, "give the evidence"));
  CHECK(says(problems_with({{"sigma", 4}}), at + "/sigma", "at most 3"));
  CHECK(says(problems_with({{"sigma", 0.5}, {"exposure", "10 gpu-days"}}), at + "/exposure", "takes no exposure"));
  CHECK(says(problems_with({{"sigma", 0.5}, {"spread", 1}}), at + "/spread", ""));
  CHECK(says(problems_with("wide"), at, "expected an object"));
}

TEST_CASE("rate uncertainty: a trial's factor has the rate as its median and the evidence's spread", "[scenario]") {
  const FaultTimelineModel few = FaultTimelineModel::from(with_uncertainty({{"events", 4}, {"exposure", "8 gpu-years"}}));
  const FaultTimelineModel many = FaultTimelineModel::from(with_uncertainty({{"events", 400}, {"exposure", "800 gpu-years"}}));
  const FaultTimelineModel spread = FaultTimelineModel::from(with_uncertainty({{"sigma", 0.5}}));
  const FaultTimelineModel exact = FaultTimelineModel::from(test::scenario_from(test::read_json(test::fixture("minimal.json"))));
  CHECK(few.rates_uncertain());
  CHECK_FALSE(exact.rates_uncertain());
  std::vector<double> f_few, f_many, f_spread;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    const std::uint64_t seed = trial_seed(1, i);
    f_few.push_back(few.rate_factors(seed)[0]);
    f_many.push_back(many.rate_factors(seed)[0]);
    f_spread.push_back(spread.rate_factors(seed)[0]);
    CHECK(exact.rate_factors(seed)[0] == 1.0);
  }
  CHECK(median(f_few) == Approx(1).margin(0.05));
  CHECK(median(f_many) == Approx(1).margin(0.01));
  CHECK(median(f_spread) == Approx(1).margin(0.03));
  auto cv = [](const std::vector<double>& v) {
    const double m = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size())) / m;
  };
  CHECK(cv(f_few) == Approx(1 / std::sqrt(4.5)).epsilon(0.08));    // Gamma(n + 1/2): 1 / sqrt(n + 1/2)
  CHECK(cv(f_many) == Approx(1 / std::sqrt(400.5)).epsilon(0.08));
  // The drawn model carries the factor into the class's rate.
  const auto seed = trial_seed(1, 7);
  CHECK(few.with_rates_drawn(seed).classes[0].rate_per_us == Approx(few.classes[0].nominal_rate_per_us * few.rate_factors(seed)[0]));
}

TEST_CASE("rate uncertainty: every variant of a sweep draws the same rates in the same trial", "[scenario]") {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["rate_uncertainty"] = {{"events", 12}, {"exposure", "24 gpu-years"}};
  json other = doc;
  other["policies"]["checkpoint"] = {{"type", "fixed"}, {"interval", "10min"}};  // a variant of the policy
  json more = doc;  // a variant that adds a class before it, with its own uncertainty
  more["faults"].push_back({{"name", "node"}, {"rate", "1/node-year"}, {"rate_uncertainty", {{"sigma", 0.5}}}, {"effect", "crash"},
                            {"detection", "10s"}, {"recovery", {{"action", "restart"}, {"duration", "1min"}}}});
  const auto a = FaultTimelineModel::from(test::scenario_from(doc));
  const auto b = FaultTimelineModel::from(test::scenario_from(other));
  const auto c = FaultTimelineModel::from(test::scenario_from(more));
  for (std::uint64_t i = 0; i < 50; ++i) {
    const std::uint64_t seed = trial_seed(3, i);
    CHECK(a.rate_factors(seed) == b.rate_factors(seed));
    CHECK(a.rate_factors(seed)[0] == c.rate_factors(seed)[0]);  // its own stream: another class's draw does not move it
  }
}

TEST_CASE("rate uncertainty: the fleets' spread is one factor a trial, shared by every class that has it", "[scenario]") {
  const std::string at = "/faults/0/rate_uncertainty";
  CHECK(problems_with({{"fleet_sigma", 1.01}}).empty());  // alone: a rate otherwise held exact
  CHECK(problems_with({{"events", 148}, {"exposure", "884736 gpu-days"}, {"fleet_sigma", 1.01}}).empty());
  CHECK(says(problems_with({{"fleet_sigma", 4}}), at + "/fleet_sigma", "from 0 to 3"));
  CHECK(says(problems_with({{"fleet_sigma", 0}}), at, "give the evidence"));
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["rate_uncertainty"] = {{"fleet_sigma", 1.0}};
  json second = doc["faults"][0];
  second["name"] = "second";
  second["rate_uncertainty"] = {{"events", 400}, {"exposure", "800 gpu-years"}, {"fleet_sigma", 1.0}};
  doc["faults"].push_back(second);
  const FaultTimelineModel m = FaultTimelineModel::from(test::scenario_from(doc));
  CHECK(m.rates_uncertain());
  std::vector<double> logs, ratio;
  for (std::uint64_t i = 0; i < 4000; ++i) {
    const auto f = m.rate_factors(trial_seed(3, i));
    logs.push_back(std::log(f[0]));
    ratio.push_back(f[1] / f[0]);  // the class's own evidence is all that is left between them
  }
  const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / 4000;
  double squares = 0;
  for (double x : logs) squares += (x - mean) * (x - mean);
  CHECK(mean == Approx(0).margin(0.05));
  CHECK(std::sqrt(squares / 4000) == Approx(1.0).epsilon(0.05));
  CHECK(median(ratio) == Approx(1).margin(0.01));
  CHECK(*std::max_element(ratio.begin(), ratio.end()) < 1.3);  // Gamma(400.5): within 30% (a shared draw, not two)
}
