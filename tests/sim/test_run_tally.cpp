// A run's memory does not grow with its trials (issue 37, item 6): the report reads a tally taken
// in trial order, exact up to 100,000 trials and a sketch past that; the trials kept whole (tests)
// and the tally say the same; a run without them streams each trial to its caller in order.

#include <catch2/catch.hpp>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>

#include "models/scenario_loader.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("online summary: summarize()'s to the bit while exact, within its error past that", "[statistics][unit]") {
  boost::random::mt19937 rng(11);
  boost::random::normal_distribution<double> goodput(0.92, 0.01);
  boost::random::poisson_distribution<int> stops(250);
  OnlineSummary g, n;
  std::vector<double> gs, ns;
  const std::size_t total = OnlineSummary::kExactSamples + 150'000;
  for (std::size_t i = 0; i < total; ++i) {
    const double a = goodput(rng), b = stops(rng);
    g.add(a), n.add(b), gs.push_back(a), ns.push_back(b);
    if (i + 1 == 1000) {  // exact: the very same numbers
      const Summary online = g.summary(), whole = summarize(gs);
      CHECK(g.exact());
      CHECK(online.mean == whole.mean);
      CHECK(online.stddev == whole.stddev);
      CHECK(online.ci95_low == whole.ci95_low);
      CHECK(online.p5 == whole.p5);
      CHECK(online.p95 == whole.p95);
    }
  }
  CHECK_FALSE(g.exact());
  CHECK(g.count() == total);
  for (const auto& [online, whole] : {std::pair{g.summary(), summarize(gs)}, std::pair{n.summary(), summarize(ns)}}) {
    CHECK(online.n == whole.n);
    CHECK(online.mean == Approx(whole.mean).epsilon(1e-12));
    CHECK(online.stddev == Approx(whole.stddev).epsilon(1e-9));
    CHECK(online.ci95_high - online.ci95_low == Approx(whole.ci95_high - whole.ci95_low).epsilon(1e-9));
    for (const auto& [a, b] : {std::pair{online.p5, whole.p5}, std::pair{online.p50, whole.p50}, std::pair{online.p95, whole.p95}})
      CHECK(a == Approx(b).epsilon(2 * OnlineSummary::kRelativeError));
  }
}

TEST_CASE("online summary: zeros and negative values take their places in the sketch", "[statistics][unit]") {
  OnlineSummary s;
  std::vector<double> all;
  for (std::size_t i = 0; i < OnlineSummary::kExactSamples + 10; ++i) {
    const double x = i % 4 == 0 ? 0.0 : i % 4 == 1 ? -2.0 : i % 4 == 2 ? 3.0 : 5.0;
    s.add(x), all.push_back(x);
  }
  const Summary online = s.summary(), whole = summarize(all);
  CHECK(online.p5 == Approx(-2).epsilon(1e-5));
  CHECK(online.p50 == Approx(whole.p50).margin(1e-4));
  CHECK(online.p95 == Approx(5).epsilon(1e-5));
}

TEST_CASE("run tally: the report's figures from the tally are the trials' own, and each trial reaches the caller in order", "[monte-carlo]") {
  const Scenario scenario = load_scenario(test::fixture("features.json"));
  RunOptions kept = test::run_options(60, 4, 3);
  const RunResult whole = run_trials(scenario, kept);
  RunOptions lean = kept;
  lean.keep_trials = false;
  lean.keep_goodputs = true;
  std::vector<int> seen;
  lean.on_trial = [&](int index, const TrialResult& t) {
    seen.push_back(index);
    CHECK(t.seed == whole.trials[static_cast<std::size_t>(index)].seed);
  };
  const RunResult tallied = run_trials(scenario, lean);
  CHECK(tallied.trials.empty());
  REQUIRE(seen.size() == 60);
  for (int i = 0; i < 60; ++i) CHECK(seen[static_cast<std::size_t>(i)] == i);
  std::vector<double> goodputs;
  double lost = 0;
  for (const auto& t : whole.trials) goodputs.push_back(goodput(t)), lost += micros_to_hours(t.ledger[Category::LostProgress]);
  CHECK(tallied.tally.goodputs() == goodputs);
  CHECK(tallied.tally.goodput().summary().p50 == summarize(goodputs).p50);
  CHECK(tallied.tally.mean_ledger_hours(static_cast<std::size_t>(Category::LostProgress)) == Approx(lost / 60));
  CHECK(tallied.tally.first_trials().size() == 60);
  CHECK(tallied.recorded.seed == whole.trials[0].seed);  // trial 0's result, for its event log
}
