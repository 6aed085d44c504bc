// What fleets say (issue 48): a class group's draw shared by its classes, classes that name a
// diagnosis category and the Xids it holds, and a fleet's posterior under a population prior,
// which narrows as the fleet's own exposure grows and follows the fleet when it has much.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/rng.hpp"
#include "models/fault_timeline.hpp"
#include "models/fleet_prior.hpp"
#include "models/scenario_loader.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using nlohmann::json;

namespace {

//! A made-up population: GPU faults at 2e-4 a GPU-day, fleets apart by sigma 0.6, groups by 0.3.
PopulationPrior toy_prior(double sigma_fleet = 0.6, double sigma_group = 0.3) {
  json draws;
  Rng rng(5);
  std::vector<double> mu, beta, fleet, group;
  for (int i = 0; i < 400; ++i) {
    mu.push_back(std::log(2e-4) + 0.05 * (static_cast<double>(rng() % 1000) / 1000 - 0.5));
    beta.push_back(1), fleet.push_back(sigma_fleet), group.push_back(sigma_group);
  }
  json m;
  for (const char* g : {"gpu", "gpu_memory", "network", "host", "software"}) m[g] = mu;
  return PopulationPrior::from_json(
      {{"kind", "ctwin-population-prior"}, {"name", "toy"}, {"draws", {{"mu", m}, {"beta_hbm", beta}, {"sigma_fleet", fleet}, {"sigma_group", group}}}},
      "toy.json");
}

json two_gpu_classes() {
  json doc = test::read_json(test::fixture("minimal.json"));
  json second = doc["faults"][0];
  second["name"] = "gpu_two";
  doc["faults"].push_back(second);
  for (auto& f : doc["faults"]) f["group"] = "gpu", f["rate_uncertainty"] = {{"sigma", 0.5}};
  return doc;
}

}  // namespace

TEST_CASE("class groups: classes of a group whose uncertainty is a sigma draw one factor between them", "[scenario]") {
  json doc = two_gpu_classes();
  const FaultTimelineModel shared = FaultTimelineModel::from(test::scenario_from(doc));
  doc["faults"][1].erase("group");
  const FaultTimelineModel apart = FaultTimelineModel::from(test::scenario_from(doc));
  int differ = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const auto s = shared.rate_factors(trial_seed(1, i)), a = apart.rate_factors(trial_seed(1, i));
    CHECK(s[0] == s[1]);
    differ += a[0] != a[1];
  }
  CHECK(differ == 200);
  doc["faults"][1]["group"] = "gpus";
  CHECK(test::says_at(test::load_problems(doc), "/faults/1/group", "expected one of \"gpu\""));
}

TEST_CASE("covers: a category's Xids and live stops, checked where they are read", "[scenario]") {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["xid"] = 79;
  doc["faults"][0]["covers"] = {{"xids", {79, 74, 62}}, {"signals", {"crash"}}, {"category", "Llama 3's 'Faulty GPU'"}};
  const Scenario s = test::scenario_from(doc);
  CHECK(s.faults[0].holds_xid(74));
  CHECK_FALSE(s.faults[0].holds_xid(48));
  REQUIRE(s.live_stops.crash);
  CHECK(*s.live_stops.crash == "gpu");  // the class covering the signal is that live stop's
  doc["faults"][0]["covers"]["xids"] = {79, 79, 0};
  doc["faults"][0]["covers"]["signals"] = {"reboot"};
  const auto problems = test::load_problems(doc);
  CHECK(test::says_at(problems, "/faults/0/covers/xids/1", "Xid 79 twice"));
  CHECK(test::says_at(problems, "/faults/0/covers/xids/2", "an Xid code"));
  CHECK(test::says_at(problems, "/faults/0/covers/signals/0", "one of \"crash\""));
  // A stated live stop that is not the class covering it.
  json both = test::read_json(test::fixture("minimal.json"));
  both["faults"][0]["covers"] = {{"signals", {"hang"}}};
  json other = both["faults"][0];
  other["name"] = "other";
  other.erase("covers");
  both["faults"].push_back(other);
  both["policies"]["live_stops"] = {{"hang", "other"}};
  CHECK(test::says_at(test::load_problems(both), "/faults/0/covers/signals/0", "names \"other\", not this class"));
  // Without covers a class holds its own Xid only.
  FaultClass plain;
  plain.xid = 48;
  CHECK(plain.holds_xid(48));
  CHECK_FALSE(plain.holds_xid(63));
}

TEST_CASE("fault volume: a trend's faults count towards the cap on faults a trial holds", "[scenario]") {
  json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["trend"] = {{"shape", 10}, {"age", "1d"}};
  // 0.5/GPU-year on 64 GPUs over 30 days at shape 10 from age 1 day: about 4e11 faults.
  CHECK(test::says_at(test::load_problems(doc), "/faults/0/rate", "a trial can hold"));
  doc["faults"][0]["trend"] = {{"shape", 2}, {"age", "30d"}};
  CHECK(test::load_problems(doc).empty());
}

TEST_CASE("fleet prior: with no data the prior predictive, narrowing and following a fleet as its exposure grows", "[scenario]") {
  const PopulationPrior prior = toy_prior();
  const FleetCovariates x;
  const FleetPosterior none = fleet_posterior(prior, x, {});
  const GroupRate& p = none.groups[0];
  CHECK_FALSE(p.observed);
  CHECK(p.median_per_day == Approx(2e-4).epsilon(0.08));
  // Its spread: the fleets' and the group's, sqrt(0.36 + 0.09) = 0.67 in the log.
  CHECK(std::log(p.p95_per_day / p.p05_per_day) / (2 * 1.645) == Approx(0.67).epsilon(0.08));
  CHECK(p.fleet_sigma == Approx(0.6).epsilon(0.1));
  CHECK(p.own_sigma == Approx(0.3).epsilon(0.15));

  // A fleet at 4x the population's rate, seen for longer and longer: its posterior narrows towards 8e-4.
  double width_before = 1e9;
  for (const double days : {300.0, 3000.0, 30000.0, 300000.0}) {
    FleetCounts counts{};
    counts[0] = {8e-4 * days, days};
    const FleetPosterior post = fleet_posterior(prior, x, counts);
    const GroupRate& g = post.groups[0];
    INFO(days << " GPU-days: median " << g.median_per_day << " [" << g.p05_per_day << ", " << g.p95_per_day << "], ESS " << post.effective_samples);
    CHECK(g.observed);
    const double width = g.p95_per_day / g.p05_per_day;
    CHECK(width < width_before);
    width_before = width;
    if (days >= 3000) {  // (300 GPU-days hold a quarter of a fault: the prior still speaks)
      CHECK(g.p05_per_day < 8e-4 * 1.05);
      CHECK(g.p95_per_day > 8e-4 * 0.95);
    }
    CHECK(post.effective_samples > 1000);
    if (days >= 300000) CHECK(g.median_per_day == Approx(8e-4).epsilon(0.05));
    // The group it did not see moves with the fleet factor the GPU faults show.
    if (days >= 30000) CHECK(post.groups[2].median_per_day > 2e-4 * 1.5);
  }
  // A group with no faults over much exposure: low, and never zero.
  FleetCounts quiet{};
  quiet[1] = {0, 1e6};
  const FleetPosterior quiet_fleet = fleet_posterior(prior, x, quiet);
  const GroupRate& q = quiet_fleet.groups[1];
  CHECK(q.median_per_day > 0);
  CHECK(q.p95_per_day < 2e-4);
}

TEST_CASE("fleet prior: a file that is not a prior is refused by pointer", "[scenario]") {
  CHECK_THROWS_WITH(PopulationPrior::from_json(json::array(), "p.json"), Catch::Contains("p.json"));
  json bad{{"kind", "ctwin-population-prior"}, {"name", "x"}, {"draws", {{"beta_hbm", {1}}, {"sigma_fleet", {0.5}}, {"sigma_group", {-1}}}}};
  try {
    PopulationPrior::from_json(bad, "p.json");
    FAIL("accepted");
  } catch (const ScenarioInvalid& e) {
    bool mu = false;
    for (const auto& problem : e.problems()) mu |= problem.pointer == "/draws/mu";
    CHECK(mu);
  }
  const PopulationPrior shipped = PopulationPrior::read(test::repo_file("scenarios/priors/public_fleets.json"));
  CHECK(shipped.draws.size() >= 500);
  CHECK(shipped.name.rfind("public-fleets", 0) == 0);
}
