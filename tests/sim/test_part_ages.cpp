// An installed base in mid-life (simulation.part_ages: stationary): a Weibull class's failure
// rate does not depend on the forecast's horizon, where new parts bunch their early failures at
// the start of every run.
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

//! Mean interruptions per day over the trials, for 64 GPUs with a Weibull(0.7) crash class of
//! 2 per GPU-year, a horizon of `days`.
double interruptions_per_day(const char* part_ages, int days, int trials) {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0] = {{"name", "gpu"}, {"rate", "2/gpu-year"}, {"distribution", "weibull"}, {"weibull_shape", 0.7},
                      {"effect", "crash"}, {"detection", "10s"}, {"recovery", {{"action", "restart"}, {"duration", "1min"}}}};
  doc["job"]["horizon"] = std::to_string(days) + "d";
  doc["simulation"] = {{"part_ages", part_ages}};
  const RunResult r = run_trials(test::scenario_from(doc), test::run_options(trials, 3));
  double sum = 0;
  for (const auto& t : r.trials) sum += static_cast<double>(t.interruptions) / micros_to_days(t.wall_us);
  return sum / static_cast<double>(r.trials.size());
}

}  // namespace

TEST_CASE("a stationary fleet's failure rate does not depend on the horizon, new parts' does", "[timeline][weibull]") {
  const double rate = 64 * 2 / 365.25;  // per day: the class's long-run rate over 64 GPUs
  const double week = interruptions_per_day("stationary", 7, 1500);
  const double quarter = interruptions_per_day("stationary", 92, 150);
  const double year = interruptions_per_day("stationary", 365, 40);
  CHECK(week == Approx(rate).epsilon(0.06));
  CHECK(quarter == Approx(rate).epsilon(0.06));
  CHECK(year == Approx(rate).epsilon(0.06));
  // New parts (the default): a shape below 1 front-loads failures, so a week sees more a day than a year.
  CHECK(interruptions_per_day("new", 7, 1500) > 1.5 * interruptions_per_day("new", 365, 40));
}
