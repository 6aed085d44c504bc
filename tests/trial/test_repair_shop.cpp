// Spares and the repair shop: repair times and failures, hot spares, retirement, misdiagnosis,
// lemons; and the statistics of injected faults.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

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

