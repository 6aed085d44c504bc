// The repair shop over many trials: lemon retirement and cures, and the statistics of injected faults.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond, day = 86400 * s;

//! 64 job nodes and 10 spares, 10% lemons failing 100x as often, every fault a replacement through
//! the shop (one-day repairs), for 360 days.
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

TEST_CASE("lemon retirement lowers the failure rate over time", "[repair][statistics]") {
  // 10% of nodes fail 100x as often. Even without retirement the rate falls as failed lemons
  // queue behind the other spares (survivorship); retirement (2 failures in 180 days) takes them
  // out of the fleet for good, so late in the year it sees far fewer faults, on the same seeds.
  auto doc = lemon_fleet();
  auto rate_by_window = [](nlohmann::json d) {
    std::vector<double> counts;
    for (const char* horizon : {"60d", "300d", "360d"}) {
      d["job"]["horizon"] = horizon;
      counts.push_back(total_faults(run_trials(test::scenario_from(d), test::run_options(40, 6))));
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
