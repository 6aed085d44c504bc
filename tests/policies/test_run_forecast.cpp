// A running job's forecast (issue 48, item 3): its rate learned from its own interruptions and
// exposure, the rest of the run drawn; the interval narrows as the job goes on.
#include <catch2/catch.hpp>

#include "policies/run_forecast.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

namespace {

//! 8 nodes, node crashes believed at 1 a node-day within a lognormal sigma of 1: a fleet known roughly.
Scenario roughly_known() {
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0] = {{"name", "node_crash"}, {"rate", "1/node-day"}, {"rate_uncertainty", {{"sigma", 1.0}}}, {"effect", "crash"},
                      {"detection", "10s"}, {"recovery", {{"action", "restart"}, {"duration", "1min"}}}};
  return test::scenario_from(doc);
}

//! A job `days` in, that saw its nodes crash at `per_node_day`, each crash costing 20 minutes.
JobSoFar after(double days, double per_node_day, std::int64_t total_steps) {
  JobSoFar j;
  j.nodes = 8;
  j.wall_s = days * 86400;
  const long crashes = std::lround(per_node_day * 8 * days);
  j.interruptions["node_crash"] = crashes;
  const double lost = static_cast<double>(crashes) * 1200;
  j.ledger.us[static_cast<std::size_t>(Category::LostProgress)] = static_cast<Micros>(lost * 1e6);
  j.ledger.us[static_cast<std::size_t>(Category::Productive)] = static_cast<Micros>((j.wall_s - lost) * 1e6);
  j.steps_done = static_cast<std::int64_t>((j.wall_s - lost) / 10);  // 10 s steps
  j.total_steps = total_steps;
  j.checkpoint_interval_s = 3600;
  return j;
}

}  // namespace

TEST_CASE("run forecast: the job's own interruptions move its rate, and the interval narrows as it learns", "[forecast]") {
  const Scenario s = roughly_known();
  const std::int64_t total = 200'000;  // about 25 days of 10 s steps
  // A fleet at three times the belief: 3 crashes a node-day.
  double width_before = 1e18;
  for (const double days : {0.01, 0.5, 2.0, 8.0}) {
    const RunForecast f = forecast_run(s, after(days, 3, total));
    INFO(days << " days: rate " << f.rate_per_day_p05 << " .. " << f.rate_per_day_p95 << " a day; remaining " << f.remaining_wall_s_p05 << " .. "
              << f.remaining_wall_s_p95 << " s; final goodput " << f.final_goodput_p05 << " .. " << f.final_goodput_p95);
    REQUIRE(f.known);
    CHECK(f.by_steps);
    CHECK(f.remaining_wall_s_p05 <= f.remaining_wall_s_p50);
    CHECK(f.remaining_wall_s_p50 <= f.remaining_wall_s_p95);
    const double width = f.rate_per_day_p95 / f.rate_per_day_p05;
    CHECK(width < width_before);
    width_before = width;
    if (days >= 2) {
      CHECK(f.rate_per_day_p05 < 24 * 1.1);  // the truth: 3 a node-day on 8 nodes
      CHECK(f.rate_per_day_p95 > 24 * 0.9);
    }
  }
  // Held exact, nothing is learnt: the rate stays the scenario's whatever the job saw.
  nlohmann::json exact = test::read_json(test::fixture("minimal.json"));
  exact["faults"][0] = {{"name", "node_crash"}, {"rate", "1/node-day"}, {"effect", "crash"}, {"detection", "10s"},
                        {"recovery", {{"action", "restart"}, {"duration", "1min"}}}};
  const RunForecast held = forecast_run(test::scenario_from(exact), after(8, 3, total));
  CHECK(held.rate_per_day_p50 == Approx(8).epsilon(0.01));
  // Goodput to date is the ledger's; the final one lies between it and the failure-free pace.
  const RunForecast late = forecast_run(s, after(8, 3, total));
  CHECK(late.goodput_to_date == Approx(1 - 24.0 * 1200 / 86400).epsilon(1e-6));
  CHECK(late.final_goodput_p95 < 1);
  CHECK(late.cost_per_interruption_s == Approx(1200).epsilon(0.05));  // the job's own cost, the scenario's worth one
  // The same state, the same forecast.
  const RunForecast again = forecast_run(s, after(8, 3, total));
  CHECK(again.remaining_wall_s_p50 == late.remaining_wall_s_p50);
}

TEST_CASE("run forecast: to the horizon without a length in steps, and a class the scenario lacks still counts", "[forecast]") {
  const Scenario s = roughly_known();  // 30-day horizon
  JobSoFar j = after(10, 1, 0);
  j.interruptions["xid_13"] = 40;  // a class the scenario has no rate for
  const RunForecast f = forecast_run(s, j);
  REQUIRE(f.known);
  CHECK_FALSE(f.by_steps);
  CHECK(f.remaining_wall_s_p50 == Approx(20 * 86400));
  CHECK(f.interruptions == 80 + 40);
  CHECK(f.rate_per_day_p50 > 8 + 3);  // the unknown class's 4 a day adds to the rate
  JobSoFar open = j;
  Scenario no_horizon = s;
  no_horizon.job.horizon_us.reset();
  CHECK_FALSE(forecast_run(no_horizon, open).known);
}
