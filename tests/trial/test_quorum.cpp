// Quorum (issue 51; policies.elastic mode quorum, as torchft) on scripted faults: a failed replica
// steps out while the others train on at reduced width, losing only the step in flight; it rejoins
// once healed; the last replica standing takes the full recovery. Ledgers worked out by hand.
#include <catch2/catch.hpp>

#include <algorithm>

#include "trial/trial.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

FaultClass fault(const char* name, Act action, Micros action_us = 0) {
  FaultClass f;
  f.name = std::string(name) + std::string(8, '_');  // not a short literal: GCC 12 warns falsely (-Wrestrict) on those
  f.effect = Effect::Crash;
  f.action = action;
  f.detection_us = 5 * s;
  f.action_us = action_us;
  return f;
}

//! `nodes` one-node replicas, a save of 10 s every 100 s of work, 1 s steps, a relaunch of 300 s;
//! the quorum re-forms in 2 s and a healed replica copies a peer's state in 20 s.
TrialConfig config(int nodes, int spares, bool quorum = true) {
  TrialConfig c;
  c.job_nodes = nodes;
  c.spare_nodes = spares;
  c.repair_us = 500 * s;
  c.interval_us = 100 * s;
  c.save_us = 10 * s;
  c.step_us = 1 * s;
  c.restart_overhead_us = 300 * s;
  c.replica_nodes = 1;
  c.quorum = quorum;
  c.quorum_reform_us = 2 * s;
  c.quorum_recover_us = 20 * s;
  c.end_us = 3000 * s;
  c.faults = {fault("software", Act::Restart), fault("node_lost", Act::Replace, 60 * s)};
  return c;
}

Micros first(const test::Scripted& run, EventKind kind) {
  for (const RunEvent& e : run.events)
    if (e.kind == kind) return e.time;
  return -1;
}

}  // namespace

TEST_CASE("quorum: a crashed replica steps out, the others train on and lose only the step in flight", "[trial][quorum][unit]") {
  // Saves end at 110, 220, ... 990, 1100 (100 s of work and a 10 s save a cycle): 1005 s is 15 s past one.
  const std::vector<FaultStrike> crash{{1005 * s, 0, 0, -1, -1}};
  const test::Scripted q = test::run_scripted(config(4, 0), crash);
  const Ledger& l = q.result.ledger;
  CHECK(l.total() == q.result.wall_us);
  CHECK(l[Category::LostProgress] == 1 * s);  // the step in flight, no rollback
  CHECK(l[Category::Detection] == 5 * s);     // the healthy replicas wait for the fault to be seen
  CHECK(l[Category::Restart] == 2 * s);       // and re-form without it
  CHECK(l[Category::CheckpointRestore] == 0);
  CHECK(q.result.interruptions == 1);
  // Out from the fault until healed: detection, the relaunch, a peer's state: 1005 + 5 + 300 + 20.
  CHECK(first(q, EventKind::Shrunk) == 1005 * s);
  CHECK(first(q, EventKind::Grown) == 1330 * s);
  // A quarter of the width missing for the compute between (saves are whole either way): shrunk.
  CHECK(l[Category::Shrunk] > 60 * s);
  CHECK(l[Category::Shrunk] < 80 * s);

  // The same fault without the quorum: everything since the save is lost, and the relaunch is paid.
  const test::Scripted full = test::run_scripted(config(4, 0, false), crash);
  CHECK(full.result.ledger[Category::LostProgress] > q.result.ledger[Category::LostProgress]);
  CHECK(full.result.ledger[Category::Restart] == 300 * s);
  CHECK(full.result.ledger[Category::Productive] < l[Category::Productive]);
}

TEST_CASE("quorum: a lost node's replica heals with a spare, or waits out of the job for one", "[trial][quorum][unit]") {
  const std::vector<FaultStrike> lost{{1005 * s, 1, 1, -1, -1}};
  // A spare at hand: it swaps in (60 s), then the relaunch and the peer's state: 1005 + 5 + 60 + 300 + 20.
  const test::Scripted spare = test::run_scripted(config(4, 1), lost);
  CHECK(first(spare, EventKind::Grown) == 1390 * s);
  CHECK(spare.result.ledger[Category::WaitingForSpares] == 0);
  CHECK(spare.result.ledger.total() == spare.result.wall_us);
  // None: the replica is out until the node is back from repair (1005 + 500), then heals the same way.
  const test::Scripted none = test::run_scripted(config(4, 0), lost);
  CHECK(first(none, EventKind::Grown) == 1885 * s);
  CHECK(none.result.ledger[Category::WaitingForSpares] == 0);  // the others never waited
  CHECK(none.result.ledger[Category::Shrunk] > spare.result.ledger[Category::Shrunk]);
  CHECK(none.result.ledger.total() == none.result.wall_us);
}

TEST_CASE("quorum: the last replica standing takes the full recovery, the healing one stays out", "[trial][quorum][unit]") {
  // Two replicas: 0 crashes at 1005 and heals until 1330; 1 crashes at 1050, the job stops.
  const std::vector<FaultStrike> both{{1005 * s, 0, 0, -1, -1}, {1050 * s, 0, 1, -1, -1}};
  const test::Scripted run = test::run_scripted(config(2, 0), both);
  const Ledger& l = run.result.ledger;
  CHECK(l.total() == run.result.wall_us);
  CHECK(run.result.interruptions == 2);
  CHECK(l[Category::Restart] == 2 * s + 300 * s);  // the reform, then the full relaunch
  // The full recovery rolls back to the save of 990 s: the work since, less the step lost at 1005.
  CHECK(l[Category::LostProgress] > 30 * s);
  CHECK(run.count(EventKind::Grown) == 1);  // replica 0 back once healed, after the full restart
  CHECK(first(run, EventKind::Grown) == 1330 * s);
}

TEST_CASE("quorum: maintenance that falls due during the stall waits for the job to run again", "[trial][quorum][unit]") {
  TrialConfig c = config(4, 0);
  c.maintenance = Maintenance{1008 * s, 10'000 * s, 60 * s};  // due while the healthy replicas wait (1005 to 1012)
  const test::Scripted run = test::run_scripted(c, {{1005 * s, 0, 0, -1, -1}});
  CHECK(run.result.ledger.total() == run.result.wall_us);
  CHECK(run.result.ledger[Category::PlannedMaintenance] == 60 * s);
  CHECK(first(run, EventKind::MaintenanceBegin) > 1012 * s);  // after the reform: its save first
}

TEST_CASE("quorum: random strikes on every kind of remediation keep the ledger whole", "[trial][quorum][unit]") {
  TrialConfig c = config(8, 1);
  c.replica_nodes = 2;
  c.faults.push_back(fault("reboot", Act::Reboot, 120 * s));
  c.faults.push_back(fault("reset", Act::ResetGpu, 30 * s));
  c.faults.back().effect = Effect::Hang;
  c.maintenance = Maintenance{2000 * s, 4000 * s, 60 * s};
  c.end_us = 20'000 * s;
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<FaultStrike> strikes;
    Micros at = 0;
    for (int k = 0; k < 40; ++k) {
      at += static_cast<Micros>(rng() % (600 * s)) + 1;
      strikes.push_back({at, static_cast<std::uint32_t>(rng() % c.faults.size()), static_cast<std::int32_t>(rng() % 8), -1, -1});
    }
    const test::Scripted run = test::run_scripted(c, strikes, static_cast<std::uint64_t>(trial));
    REQUIRE(run.result.ledger.total() == run.result.wall_us);
    CHECK(run.result.wall_us == c.end_us);
  }
}
