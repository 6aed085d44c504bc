// Repairs as fleets see them, and a model stated exactly: exponential manual repairs, and no faults
// during recovery (the classic renewal formula). Lemons a repair cures: test_repair_shop_runs.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("exponential manual repairs take their mean", "[repair][statistics]") {
  // One node fails often; the job waits for it (no spares), so waiting time = repair time.
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"] = {{"nodes", 1}, {"gpus_per_node", 8}, {"gpu", {{"model", "H100"}, {"peak_bf16", "989TFLOP/s"}}}, {"spare_nodes", 0}};
  doc["job"] = {{"nodes", 1}, {"step_time", "10s"}, {"horizon", "3000d"}};
  doc["faults"][0] = {{"name", "node"}, {"rate", "12/node-year"}, {"effect", "crash"}, {"detection", "0s"},
                      {"recovery", {{"action", "replace"}, {"duration", "0s"}}}};
  doc["spares"] = {{"repair", {{"distribution", "exponential"}, {"mean", "2d"}}}};
  const RunResult r = run_trials(test::scenario_from(doc), test::run_options(20, 9));
  double repairs = 0, waited_days = 0;
  for (const auto& t : r.trials) {
    repairs += static_cast<double>(t.interruptions);
    waited_days += micros_to_seconds(t.ledger[Category::WaitingForSpares]) / 86400;
  }
  const double mean = waited_days / repairs;
  INFO(repairs << " repairs, mean " << mean << " days");
  CHECK(repairs > 500);
  CHECK(mean == Approx(2.0).epsilon(0.1));  // 2 days; the standard error is ~2/sqrt(n) of the mean
}

TEST_CASE("with no faults during recovery, goodput is the renewal formula exactly", "[model][statistics]") {
  // One exponential class of mean M per job, a save of delta every tau of work, recovery R
  // (detection, restart, restore) during which nothing strikes. Each segment of tau + delta
  // takes, in expectation, (M + R)(e^((tau + delta)/M) - 1): goodput = tau / that.
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"] = {{"nodes", 1}, {"gpus_per_node", 1}, {"gpu", {{"model", "H100"}, {"peak_bf16", "989TFLOP/s"}}}, {"spare_nodes", 0}};
  doc["job"] = {{"nodes", 1}, {"step_time", "10s"}, {"horizon", "1000d"}};
  doc["faults"] = nlohmann::json::array({{{"name", "crash"}, {"rate", "365/gpu-year"}, {"effect", "crash"}, {"detection", "20min"},
                                          {"recovery", {{"action", "restart"}, {"duration", "0s"}}}}});
  doc["checkpoint"] = {{"save_time", "10min"}, {"restore_time", "30min"}};
  doc["restart"] = {{"overhead", "10min"}};
  doc["policies"] = {{"checkpoint", {{"type", "fixed"}, {"interval", "2h"}}}};
  doc["simulation"] = {{"faults_during_recovery", false}};
  const double m = 86400, r = 3600, tau = 7200, delta = 600;
  const double expected = tau / ((m + r) * std::expm1((tau + delta) / m));
  const RunResult run = run_trials(test::scenario_from(doc), test::run_options(40, 12));
  std::vector<double> goodput;
  for (const auto& t : run.trials) goodput.push_back(static_cast<double>(t.ledger[Category::Productive]) / static_cast<double>(t.wall_us));
  const Summary g = summarize(goodput);
  INFO("expected " << expected << ", simulated " << g.mean << " [" << g.ci95_low << ", " << g.ci95_high << "]");
  CHECK(g.ci95_low - 0.002 < expected);  // a 1000-day run ends mid-segment: a hair of bias
  CHECK(g.ci95_high + 0.002 > expected);
  // With faults during recovery the same run does worse: the formula no longer holds.
  doc["simulation"]["faults_during_recovery"] = true;
  const RunResult with = run_trials(test::scenario_from(doc), test::run_options(40, 12));
  double sum = 0;
  for (const auto& t : with.trials) sum += static_cast<double>(t.ledger[Category::Productive]) / static_cast<double>(t.wall_us);
  CHECK(sum / 40 < g.mean);
}
