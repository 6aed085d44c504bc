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
    const RunForecast f = RunForecaster(s).forecast(after(days, 3, total));
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
  const RunForecast held = RunForecaster(test::scenario_from(exact)).forecast(after(8, 3, total));
  CHECK(held.rate_per_day_p50 == Approx(8).epsilon(0.01));
  // Goodput to date is the ledger's; the final one lies between it and the failure-free pace.
  const RunForecast late = RunForecaster(s).forecast(after(8, 3, total));
  CHECK(late.goodput_to_date == Approx(1 - 24.0 * 1200 / 86400).epsilon(1e-6));
  CHECK(late.final_goodput_p95 < 1);
  CHECK(late.cost_per_interruption_s == Approx(1200).epsilon(0.05));  // the job's own cost, the scenario's worth one
  // The same state, the same forecast.
  const RunForecast again = RunForecaster(s).forecast(after(8, 3, total));
  CHECK(again.remaining_wall_s_p50 == late.remaining_wall_s_p50);
}

TEST_CASE("run forecast: to the horizon without a length in steps, and a class the scenario lacks still counts", "[forecast]") {
  const Scenario s = roughly_known();  // 30-day horizon
  JobSoFar j = after(10, 1, 0);
  j.interruptions["xid_13"] = 40;  // a class the scenario has no rate for
  const RunForecast f = RunForecaster(s).forecast(j);
  REQUIRE(f.known);
  CHECK_FALSE(f.by_steps);
  CHECK(f.remaining_wall_s_p50 == Approx(20 * 86400));
  CHECK(f.interruptions == 80 + 40);
  CHECK(f.rate_per_day_p50 > 8 + 3);  // the unknown class's 4 a day adds to the rate
  JobSoFar open = j;
  Scenario no_horizon = s;
  no_horizon.job.horizon_us.reset();
  CHECK_FALSE(RunForecaster(no_horizon).forecast(open).known);
}

TEST_CASE("run forecast: the belief is the scenario's own draws, its spread before any data, and a belief too sure is overruled", "[forecast]") {
  // Two classes sharing the fleet factor (sigma 1), and a little of their own.
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"] = nlohmann::json::array(
      {{{"name", "gpu_crash"}, {"rate", "0.5/gpu-day"}, {"rate_uncertainty", {{"sigma", 0.1}, {"fleet_sigma", 1.0}}}, {"effect", "crash"},
        {"detection", "10s"}, {"recovery", {{"action", "restart"}, {"duration", "1min"}}}},
       {{"name", "host_crash"}, {"rate", "1/node-day"}, {"rate_uncertainty", {{"sigma", 0.1}, {"fleet_sigma", 1.0}}}, {"effect", "crash"},
        {"detection", "10s"}, {"recovery", {{"action", "restart"}, {"duration", "1min"}}}}});
  const Scenario s = test::scenario_from(doc);
  const RunForecaster forecaster(s);
  // No data: the scenario's spread, a lognormal of sigma about 1: p95/p5 about e^(2 x 1.645 x 1) = 27.
  JobSoFar start = after(0, 0, 0);
  start.interruptions.clear();
  const RunForecast prior = forecaster.forecast(start);
  CHECK(prior.rate_per_day_p95 / prior.rate_per_day_p05 == Approx(27).epsilon(0.25));
  CHECK(prior.rate_per_day_p50 == Approx(8 * 8 * 0.5 + 8).epsilon(0.1));  // at the nominal rates, its median
  // A week of both at four times the belief: the fleet factor moves them together.
  JobSoFar week = after(7, 0, 0);
  week.interruptions = {{"gpu_crash", std::lround(4 * 0.5 * 64 * 7)}, {"host_crash", std::lround(4 * 1 * 8 * 7)}};
  const RunForecast learnt = forecaster.forecast(week);
  CHECK_FALSE(learnt.belief_overruled);
  CHECK(learnt.rate_per_day_p50 == Approx(4 * 40).epsilon(0.1));
  CHECK(learnt.rate_per_day_p95 / learnt.rate_per_day_p05 < 1.3);
  // A belief far too sure (sigma 0.02) against a fleet at ten times it: overruled, the counts speak.
  doc["faults"][0]["rate_uncertainty"] = {{"sigma", 0.02}};
  doc["faults"][1]["rate_uncertainty"] = {{"sigma", 0.02}};
  JobSoFar ten = week;
  ten.interruptions = {{"gpu_crash", std::lround(10 * 0.5 * 64 * 7)}, {"host_crash", std::lround(10 * 8 * 7)}};
  const RunForecast overruled = RunForecaster(test::scenario_from(doc)).forecast(ten);
  CHECK(overruled.belief_overruled);
  CHECK(overruled.rate_per_day_p50 == Approx(400).epsilon(0.05));
}

TEST_CASE("run forecast: an interruption costs the restart of the path its class takes (in-process, warm standby, relaunch)", "[forecast]") {
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0] = {{"name", "node_crash"}, {"rate", "1/node-day"}, {"effect", "crash"}, {"detection", "10s"},
                      {"recovery", {{"action", "restart"}, {"duration", "1min"}}}};
  doc["restart"] = {{"overhead", "5min"}, {"in_process", {{"overhead", "10s"}}}, {"warm_standby", {{"overhead", "30s"}}}};
  const auto cost = [&](const char* mechanism) {
    doc["restart"]["mechanism"] = mechanism;
    JobSoFar fresh = after(0.01, 0, 0);  // nothing seen yet: the scenario's cost alone
    return RunForecaster(test::scenario_from(doc)).forecast(fresh).cost_per_interruption_s;
  };
  const double relaunch = cost("relaunch");
  CHECK(relaunch - cost("in_process") == Approx(290).epsilon(1e-6));  // a crash restarted in place: 10 s, not 5 min
  CHECK(relaunch - cost("warm_standby") == Approx(270).epsilon(1e-6));
  // A class in-process cannot take (a reboot) goes to the warm standby when there is one.
  doc["faults"][0]["recovery"]["action"] = "reboot";
  const double rebooted = cost("relaunch");
  CHECK(rebooted - cost("in_process") == Approx(270).epsilon(1e-6));
}
