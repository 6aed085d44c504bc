// Spares and the repair shop: repair times and failures, hot spares, retirement, misdiagnosis,
// lemons; and the statistics of injected faults.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "sim/monte_carlo.hpp"
#include "test_helpers.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond, day = 86400 * s;

TrialConfig replace_config(int job, int spares) {
  FaultClass f;
  f.name = std::string("gpu_lost");
  f.effect = Effect::Crash;
  f.action = Act::Replace;
  f.detection_us = 10 * s;
  f.action_us = 600 * s;
  TrialConfig c;
  c.job_nodes = job;
  c.spare_nodes = spares;
  c.interval_us = 3600 * s;
  c.save_us = 10 * s;
  c.restart_overhead_us = 60 * s;
  c.repair_us = 2 * day;
  c.end_us = 400 * day;
  c.faults = {f};
  return c;
}

std::vector<RunEvent> run_scripted(const TrialConfig& c, const std::vector<FaultStrike>& strikes, TrialResult* out = nullptr) {
  test::Scripted run = test::run_scripted(c, strikes, 99);
  if (out) *out = run.result;
  return std::move(run.events);
}

//! Turnaround of every node sent to repair: from to_repair to its node_up.
std::vector<double> turnarounds_days(const std::vector<RunEvent>& events) {
  std::map<int, Micros> sent;
  std::vector<double> out;
  for (const auto& e : events) {
    if (e.kind == EventKind::ToRepair) sent[e.node] = e.time;
    if (e.kind == EventKind::NodeUp && sent.count(e.node)) {
      out.push_back(static_cast<double>(e.time - sent[e.node]) / static_cast<double>(day));
      sent.erase(e.node);
    }
  }
  return out;
}

std::vector<FaultStrike> one_per_slot(int count, Micros spacing) {
  std::vector<FaultStrike> strikes;
  for (int i = 0; i < count; ++i) strikes.push_back({(i + 1) * spacing, 0, i, 0, -1});
  return strikes;
}

}  // namespace

TEST_CASE("repairs take triage plus a lognormal time, and failed repairs go to RMA", "[repair]") {
  TrialConfig c = replace_config(300, 300);
  c.shop.triage_us = day / 24;
  c.shop.repair_median_us = 2.0 * static_cast<double>(day);
  c.shop.repair_sigma = 0.5;
  std::vector<double> t = turnarounds_days(run_scripted(c, one_per_slot(200, day / 4)));
  REQUIRE(t.size() == 200);
  std::sort(t.begin(), t.end());
  CHECK(t[100] == Approx(2.0 + 1.0 / 24).epsilon(0.12));  // the median
  CHECK(t.front() > 1.0 / 24);                              // never shorter than triage

  c.shop.failure_probability = 0.5;
  c.shop.rma_us = 30 * day;
  std::vector<double> with_rma = turnarounds_days(run_scripted(c, one_per_slot(200, day / 4)));
  const auto long_ones = std::count_if(with_rma.begin(), with_rma.end(), [](double d) { return d > 20; });
  CHECK(long_ones == Approx(100).margin(25));  // about half went through RMA
}

TEST_CASE("a hot spare swaps in faster than a cold one", "[repair]") {
  TrialConfig cold = replace_config(8, 2);
  TrialResult cold_result, hot_result;
  run_scripted(cold, {{day, 0, 3, 0, -1}}, &cold_result);
  TrialConfig hot = cold;
  hot.shop.hot_count = 1;
  hot.shop.hot_swap_us = 30 * s;
  run_scripted(hot, {{day, 0, 3, 0, -1}}, &hot_result);
  CHECK(cold_result.ledger[Category::Restart] == (600 + 60) * s);
  CHECK(hot_result.ledger[Category::Restart] == (30 + 60) * s);
}

TEST_CASE("a node that fails too often is retired instead of coming back", "[repair]") {
  TrialConfig c = replace_config(8, 4);
  c.shop.retire_after = 2;
  c.shop.retire_within_us = 30 * day;
  c.faults[0].action = Act::Reboot;  // the first fault only reboots node 3
  FaultClass replace = c.faults[0];
  replace.action = Act::Replace;
  c.faults.push_back(replace);
  const auto events = run_scripted(c, {{day, 0, 3, 0, -1}, {5 * day, 1, 3, 0, -1}});
  const auto retired = std::count_if(events.begin(), events.end(), [](const RunEvent& e) { return e.kind == EventKind::Retired && e.node == 3; });
  CHECK(retired == 1);
  CHECK(turnarounds_days(events).empty());  // it never comes back

  SECTION("failures further apart than the window do not retire it") {
    const auto apart = run_scripted(c, {{day, 0, 3, 0, -1}, {40 * day, 1, 3, 0, -1}});
    CHECK(std::none_of(apart.begin(), apart.end(), [](const RunEvent& e) { return e.kind == EventKind::Retired; }));
  }
}

TEST_CASE("a misdiagnosis replaces the wrong node, and the bad one fails again", "[repair]") {
  TrialConfig c = replace_config(8, 8);
  c.shop.misdiagnosis_probability = 1.0;
  c.shop.recurrence_mean_us = 2 * 3600 * s;
  c.end_us = 10 * day;
  TrialResult r;
  const auto events = run_scripted(c, {{day, 0, 3, 0, -1}}, &r);
  const auto wrong = std::find_if(events.begin(), events.end(), [](const RunEvent& e) { return e.kind == EventKind::Misdiagnosed; });
  REQUIRE(wrong != events.end());
  CHECK(wrong->node != 3);
  // Node 3 stayed and struck again (and was misdiagnosed again, and again: probability 1).
  const auto node3_faults = std::count_if(events.begin(), events.end(), [](const RunEvent& e) { return e.kind == EventKind::Fault && e.node == 3; });
  CHECK(node3_faults >= 2);
  CHECK(r.fault_counts[0] >= 2);
  CHECK(r.ledger.total() == r.wall_us);
}

TEST_CASE("lemon retirement lowers the failure rate over time", "[repair][statistics]") {
  // 10% of nodes fail 100x as often. Even without retirement the rate falls as failed lemons
  // queue behind the other spares (survivorship); retirement (2 failures in 180 days) takes them
  // out of the fleet for good, so late in the year it sees far fewer faults, on the same seeds.
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"] = {{"nodes", 74}, {"gpus_per_node", 8}, {"gpu", {{"model", "H100"}, {"peak_bf16", "989TFLOP/s"}}}, {"spare_nodes", 10}};
  doc["job"] = {{"nodes", 64}, {"step_time", "10s"}, {"horizon", "360d"}};
  doc["faults"][0] = {{"name", "node"}, {"rate", "0.2/node-year"}, {"effect", "crash"}, {"detection", "10s"},
                      {"recovery", {{"action", "replace"}, {"duration", "5min"}}}};
  doc["spares"] = {{"repair_time", "1d"}, {"lemons", {{"fraction", 0.1}, {"rate_multiplier", 100}}}};
  auto rate_by_window = [](nlohmann::json d) {
    std::vector<double> counts;
    for (const char* horizon : {"60d", "300d", "360d"}) {
      d["job"]["horizon"] = horizon;
      const RunResult r = run_trials(test::scenario_from(d), test::run_options(40, 6));
      double sum = 0;
      for (const auto& t : r.trials) sum += static_cast<double>(t.fault_counts[0]);
      counts.push_back(sum);
    }
    return std::make_pair(counts[0], counts[2] - counts[1]);  // first 60 days, last 60 days
  };
  const auto [first_kept, last_kept] = rate_by_window(doc);
  doc["spares"]["retirement"] = {{"failures", 2}, {"within", "180d"}};
  const auto [first_retired, last_retired] = rate_by_window(doc);
  INFO("no retirement: " << first_kept << " then " << last_kept << "; retirement: " << first_retired << " then " << last_retired);
  CHECK(first_retired == Approx(first_kept).epsilon(0.05));  // nothing retired yet early on
  CHECK(last_retired < 0.6 * last_kept);
  CHECK(last_retired < 0.4 * first_retired);
}

TEST_CASE("injected fault counts match the configured rates (chi-square)", "[repair][statistics]") {
  // Four classes; plenty of spares and quick repairs, so slots are rarely empty.
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"]["nodes"] = 48;
  doc["cluster"]["spare_nodes"] = 16;
  doc["job"] = {{"nodes", 32}, {"step_time", "10s"}, {"horizon", "60d"}};
  doc["spares"] = {{"repair_time", "1h"}};
  const std::vector<std::pair<const char*, double>> classes{{"0.4/gpu-year", 32 * 8 * 0.4}, {"0.2/gpu-year", 32 * 8 * 0.2},
                                                             {"2/node-year", 32 * 2.0}, {"1/node-year", 32 * 1.0}};
  doc["faults"] = nlohmann::json::array();
  for (std::size_t i = 0; i < classes.size(); ++i)
    doc["faults"].push_back({{"name", std::string("class_") += std::to_string(i)}, {"rate", classes[i].first}, {"effect", "crash"},
                             {"detection", "10s"}, {"recovery", {{"action", i % 2 ? "reboot" : "replace"}, {"duration", "5min"}}}});
  const RunResult r = run_trials(test::scenario_from(doc), test::run_options(400, 2024));
  double chi2 = 0, wall_years = 0;
  for (const auto& t : r.trials) wall_years += micros_to_days(t.wall_us) / 365;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    double observed = 0;
    for (const auto& t : r.trials) observed += static_cast<double>(t.fault_counts[i]);
    const double expected = classes[i].second * wall_years;
    INFO("class " << i << ": observed " << observed << ", expected " << expected);
    chi2 += (observed - expected) * (observed - expected) / expected;
  }
  CHECK(chi2 < 18.47);  // chi-square, 4 degrees of freedom, 99.9% point
}

TEST_CASE("a Weibull shape below 1 gives more early failures of new parts than shape 1", "[repair][statistics]") {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0] = {{"name", "part"}, {"rate", "1/gpu-year"}, {"effect", "crash"}, {"detection", "10s"},
                      {"recovery", {{"action", "replace"}, {"duration", "5min"}}}};
  doc["job"]["horizon"] = "30d";
  doc["spares"] = {{"repair_time", "1h"}};
  auto early_faults = [&](const nlohmann::json& d) {
    const RunResult r = run_trials(test::scenario_from(d), test::run_options(300, 12));
    double sum = 0;
    for (const auto& t : r.trials) sum += static_cast<double>(t.fault_counts[0]);
    return sum;
  };
  const double exponential = early_faults(doc);
  doc["faults"][0]["distribution"] = "weibull";
  doc["faults"][0]["weibull_shape"] = 1.0;
  const double shape_one = early_faults(doc);
  doc["faults"][0]["weibull_shape"] = 0.6;
  const double infant = early_faults(doc);
  INFO("first 30 days: exponential " << exponential << ", Weibull k=1 " << shape_one << ", k=0.6 " << infant);
  CHECK(shape_one == Approx(exponential).epsilon(0.1));
  CHECK(infant > 1.5 * shape_one);
}
