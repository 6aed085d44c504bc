// Two-level Monte Carlo (issue 37, item 1): each trial draws its rates, then its faults. One run's
// interval widens with the rates' uncertainty; off, the run is the exact-rate run, trial by trial.
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

std::vector<double> interruptions(const RunResult& r) {
  std::vector<double> v;
  for (const auto& t : r.trials) v.push_back(static_cast<double>(t.interruptions));
  return v;
}

}  // namespace

TEST_CASE("rate uncertainty: one run's interval widens with it, and off is the exact-rate run", "[sim]") {
  const Scenario exact = load_scenario(test::repo_file("scenarios/default.json"));
  auto doc = test::read_json(test::repo_file("scenarios/default.json"));
  for (auto& f : doc["faults"]) f.erase("rate_uncertainty");
  const Scenario held = test::scenario_from(doc);
  REQUIRE(exact.faults[0].uncertainty);
  RunOptions on = test::run_options(400, 1);
  RunOptions off = on;
  off.rate_uncertainty = false;
  const RunResult drawn = run_trials(exact, on), fixed = run_trials(exact, off), without = run_trials(held, on);
  CHECK(drawn.rates_drawn);
  CHECK_FALSE(fixed.rates_drawn);
  CHECK_FALSE(without.rates_drawn);
  test::require_same_trials(fixed, without);  // off: the rates as written, trial by trial
  // The default's classes are Llama 3's counts (148 faulty GPUs, ...): one run's 90 % interval of its
  // interruptions is wider with them than Poisson noise alone.
  const Summary n_drawn = summarize(interruptions(drawn)), n_fixed = summarize(interruptions(fixed));
  CHECK(n_drawn.p95 - n_drawn.p5 > 1.1 * (n_fixed.p95 - n_fixed.p5));
  // The same seed gives the same report (determinism), drawn rates included.
  test::require_same_trials(drawn, run_trials(exact, on));
}
