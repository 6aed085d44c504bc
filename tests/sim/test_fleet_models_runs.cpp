// Lemons and repairs as fleets see them, and a model stated exactly: a repair that cures a lemon,
// exponential manual repairs, and no faults during recovery (the classic renewal formula).
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

//! 64 job nodes, 10% lemons failing 100x as often, every fault a replacement through the shop.
nlohmann::json lemon_fleet() {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"] = {{"nodes", 74}, {"gpus_per_node", 8}, {"gpu", {{"model", "H100"}, {"peak_bf16", "989TFLOP/s"}}}, {"spare_nodes", 10}};
  doc["job"] = {{"nodes", 64}, {"step_time", "10s"}, {"horizon", "360d"}};
  doc["faults"][0] = {{"name", "node"}, {"rate", "0.2/node-year"}, {"effect", "crash"}, {"detection", "10s"},
                      {"recovery", {{"action", "replace"}, {"duration", "5min"}}}};
  doc["spares"] = {{"repair_time", "1d"}, {"lemons", {{"fraction", 0.1}, {"rate_multiplier", 100}}}};
  return doc;
}

double total_faults(const RunResult& r) {
  double sum = 0;
  for (const auto& t : r.trials) sum += static_cast<double>(t.fault_counts[0]);
  return sum;
}

}  // namespace

TEST_CASE("a repair that cures lemons leaves fewer faults, on the same draws", "[repair][statistics]") {
  auto doc = lemon_fleet();
  const double never = total_faults(run_trials(test::scenario_from(doc), test::run_options(30, 4)));
  doc["spares"]["lemons"]["cure_probability"] = 1.0;
  const double always = total_faults(run_trials(test::scenario_from(doc), test::run_options(30, 4)));
  doc["spares"]["lemons"]["cure_probability"] = 0.5;
  const double half = total_faults(run_trials(test::scenario_from(doc), test::run_options(30, 4)));
  INFO("never cured " << never << ", half " << half << ", always " << always);
  // Cured at its first repair, a lemon fails once and then at the fleet's rate: 30 trials x (64
  // nodes x 0.2/year x 360 days, and one fault for each of the ~7.4 lemons among 74 nodes) ~ 600.
  CHECK(always == Approx(30 * (64 * 0.2 * 360 / 365 + 7.4)).epsilon(0.15));
  CHECK(always < 0.6 * never);
  CHECK(half > always);
  CHECK(half < never);
}

TEST_CASE("exponential manual repairs take their mean", "[repair][statistics]") {
  // One node fails often; the job waits for it (no spares), so waiting time = repair time.
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"] = {{"nodes", 1}, {"gpus_per_node", 8}, {"gpu", {{"model", "H100"}, {"peak_bf16", "989TFLOP/s"}}}, {"spare_nodes", 0}};
  doc["job"] = {{"nodes", 1}, {"step_time", "10s"}, {"horizon", "3000d"}};
  doc["faults"][0] = {{"name", "node"}, {"rate", "12/node-year"}, {"effect", "crash"}, {"detection", "0s"},
                      {"recovery", {{"action", "replace"}, {"duration", "0s"}}}};
  doc["spares"] = {{"repair", {{"distribution", "exponential"}, {"mean", "2d"}}}};
  const RunResult r = run_trials(test::scenario_from(doc), test::run_options(20, 9));
  std::vector<double> waits;
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
