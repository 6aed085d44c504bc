// A dry spare pool met by the operator's policy (policies.spare_pool), in scripted trials: a top-up
// ends the wait for a spare when its nodes land, and an expedited repair when the node is back;
// the ledger still adds up to the wall time.
#include <catch2/catch.hpp>

#include <memory>

#include "policies/recovery_controller.hpp"
#include "support/scripted.hpp"
#include "trial/trial.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond, hour = 3600 * s, day = 86400 * s;

//! `job` nodes, `spares` spares, a node lost to each strike (replaced, 3-day repairs), the pool's policy.
TrialConfig dry_pool(int job, int spares, const SparePoolSpec& policy) {
  FaultClass lost;
  lost.name = "gpu_lost";
  lost.effect = Effect::Crash;
  lost.action = Act::Replace;
  lost.detection_us = 10 * s;
  lost.action_us = 120 * s;
  TrialConfig c;
  c.job_nodes = job;
  c.spare_nodes = spares;
  c.interval_us = hour;
  c.save_us = 10 * s;
  c.restart_overhead_us = 60 * s;
  c.repair_us = 3 * day;
  c.end_us = 20 * day;
  c.faults = {lost};
  Scenario scenario;
  scenario.spare_pool = policy;
  if (policy.any()) c.controller = std::make_shared<const RecoveryController>(scenario);
  return c;
}

Micros first_time(const test::Scripted& run, EventKind kind, int node) {
  for (const RunEvent& e : run.events)
    if (e.kind == kind && e.node == node) return e.time;
  return kNever;
}

}  // namespace

TEST_CASE("a dry pool topped up ends the wait for a spare when the nodes land, not when the repair does", "[trial][spares]") {
  const std::vector<FaultStrike> strike{{1 * day, 0, 0, 0, -1}};
  const test::Scripted waits = test::run_scripted(dry_pool(4, 0, {}), strike);
  CHECK(waits.result.ledger[Category::WaitingForSpares] == 3 * day);  // the repaired node itself

  SparePoolSpec top_up;
  top_up.top_up_nodes = 2;
  top_up.top_up_delay_us = 12 * hour;
  top_up.top_up_at_most = 2;
  const test::Scripted topped = test::run_scripted(dry_pool(4, 0, top_up), strike);
  const Ledger& l = topped.result.ledger;
  CHECK(l[Category::WaitingForSpares] == 12 * hour);
  CHECK(l.total() == topped.result.wall_us);
  // The new nodes are numbered after the job's and join the pool together; one takes the slot.
  CHECK(first_time(topped, EventKind::NodeUp, 4) == 1 * day + 10 * s + 12 * hour);
  CHECK(first_time(topped, EventKind::NodeUp, 5) == 1 * day + 10 * s + 12 * hour);
  CHECK(topped.slots[0] == 4);
  CHECK(topped.result.ledger[Category::Productive] > waits.result.ledger[Category::Productive]);

  // A second loss while a spare is left takes it at once; the third waits for the repairs (the cap is reached).
  const test::Scripted more = test::run_scripted(dry_pool(4, 0, top_up), {{1 * day, 0, 0, 0, -1}, {3 * day, 0, 1, 0, -1}, {3 * day + hour, 0, 2, 0, -1}});
  CHECK(more.count(EventKind::WaitingForSpare) == 2);
  CHECK(more.result.ledger[Category::WaitingForSpares] == 12 * hour + (1 * day + 10 * s + 3 * day) - (3 * day + hour + 10 * s));
  CHECK(more.result.ledger.total() == more.result.wall_us);
}

TEST_CASE("expedited repairs while the pool is dry bring the node back within the cap, and only while it is dry", "[trial][spares]") {
  SparePoolSpec expedite;
  expedite.expedited_repair_us = 1 * day;
  const test::Scripted fast = test::run_scripted(dry_pool(4, 0, expedite), {{1 * day, 0, 0, 0, -1}});
  CHECK(fast.result.ledger[Category::WaitingForSpares] == 1 * day);
  CHECK(first_time(fast, EventKind::NodeUp, 0) == 1 * day + 10 * s + 1 * day);
  CHECK(fast.result.ledger.total() == fast.result.wall_us);

  // Two spares: the first loss leaves one in the pool (its repair takes its 3 days) until the
  // second loss empties it; from then both repairs are expedited.
  const test::Scripted two = test::run_scripted(dry_pool(4, 2, expedite), {{1 * day, 0, 0, 0, -1}, {day + 12 * hour, 0, 1, 0, -1}});
  const Micros dry_at = day + 12 * hour + 10 * s;
  CHECK(first_time(two, EventKind::NodeUp, 0) == dry_at + 1 * day);  // started at day 1, cut short when the pool ran dry
  CHECK(first_time(two, EventKind::NodeUp, 1) == dry_at + 1 * day);
  CHECK(two.result.ledger[Category::WaitingForSpares] == 0);
  const test::Scripted slow = test::run_scripted(dry_pool(4, 2, {}), {{1 * day, 0, 0, 0, -1}, {day + 12 * hour, 0, 1, 0, -1}});
  CHECK(first_time(slow, EventKind::NodeUp, 0) == day + 10 * s + 3 * day);
}
