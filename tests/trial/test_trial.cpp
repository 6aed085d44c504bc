// The trial state machine on scripted faults, with ledgers worked out by hand.
#include <catch2/catch.hpp>

#include "core/invariant.hpp"
#include "trial/trial.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

FaultClass crash(Act action, Micros detection, Micros diagnosis = 0, Micros action_us = 0) {
  FaultClass f;
  f.name = "crash";
  f.effect = Effect::Crash;
  f.action = action;
  f.detection_us = detection;
  f.diagnosis_us = diagnosis;
  f.action_us = action_us;
  return f;
}

TrialConfig config(Micros interval, Micros save, Micros restart, Micros restore, Micros horizon) {
  TrialConfig c;
  c.job_nodes = 2;
  c.interval_us = interval;
  c.save_us = save;
  c.restart_overhead_us = restart;
  c.restore_us = restore;
  c.end_us = horizon;
  return c;
}

TrialResult run_scripted(const TrialConfig& c, const std::vector<FaultStrike>& strikes, TrialObserver* observer = nullptr) {
  const test::Scripted run = test::run_scripted(c, strikes);
  if (observer)
    for (const auto& e : run.events) observer->on_event(e);
  return run.result;
}

FaultStrike strike(Micros at, std::uint32_t fault_class = 0, int slot = 0) { return {at, fault_class, slot, -1}; }

Micros hours(const TrialResult& r, Category c) { return r.ledger[c]; }

}  // namespace

TEST_CASE("a crash loses the work since the last save, then detection, diagnosis, restart, restore", "[trial]") {
  TrialConfig c = config(100 * s, 10 * s, 20 * s, 5 * s, 400 * s);
  c.faults = {crash(Act::Restart, 3 * s, 2 * s)};
  const TrialResult r = run_scripted(c, {strike(250 * s)});
  CHECK(hours(r, Category::Productive) == 310 * s);  // 100 + 100 + 100 + 10 open at the horizon
  CHECK(hours(r, Category::CheckpointSave) == 30 * s);
  CHECK(hours(r, Category::LostProgress) == 30 * s);
  CHECK(hours(r, Category::Detection) == 3 * s);
  CHECK(hours(r, Category::Diagnosis) == 2 * s);
  CHECK(hours(r, Category::Restart) == 20 * s);
  CHECK(hours(r, Category::CheckpointRestore) == 5 * s);
  CHECK(r.ledger.total() == r.wall_us);
  CHECK(r.wall_us == 400 * s);
  CHECK(r.checkpoints == 3);
  CHECK(r.fault_counts == std::vector<std::int64_t>{1});
}

TEST_CASE("faults during a save and during a restart start the chain again", "[trial]") {
  TrialConfig c = config(100 * s, 10 * s, 20 * s, 0, 200 * s);
  c.faults = {crash(Act::Restart, 0)};
  const TrialResult r = run_scripted(c, {strike(105 * s), strike(115 * s)});
  CHECK(hours(r, Category::CheckpointSave) == 5 * s);   // the interrupted save
  CHECK(hours(r, Category::LostProgress) == 100 * s);   // it never completed
  CHECK(hours(r, Category::Restart) == 30 * s);         // 10 s, then 20 s again
  CHECK(hours(r, Category::Productive) == 65 * s);
  CHECK(r.ledger.total() == r.wall_us);
}

TEST_CASE("the job waits for a spare when the pool is empty, and the repaired node comes back", "[trial]") {
  TrialConfig c = config(100 * s, 10 * s, 20 * s, 5 * s, 1300 * s);
  c.repair_us = 1000 * s;
  c.faults = {crash(Act::Replace, 0, 0, 30 * s)};
  EventRecorder log;
  const TrialResult r = run_scripted(c, {strike(50 * s), strike(500 * s)}, &log);
  CHECK(hours(r, Category::WaitingForSpares) == 1000 * s);
  CHECK(hours(r, Category::Restart) == 50 * s);  // 30 s swap + 20 s restart overhead
  CHECK(hours(r, Category::LostProgress) == 50 * s);
  CHECK(hours(r, Category::Productive) == 185 * s);
  CHECK(r.ledger.total() == r.wall_us);
  // The second strike hit the empty slot: ignored, not counted.
  CHECK(r.fault_counts == std::vector<std::int64_t>{1});
  bool ignored = false;
  for (const auto& e : log.events) ignored |= e.kind == EventKind::FaultIgnored;
  CHECK(ignored);

  SECTION("with a spare in the pool there is no wait") {
    c.spare_nodes = 1;
    const TrialResult with_spare = run_scripted(c, {strike(50 * s)});
    CHECK(hours(with_spare, Category::WaitingForSpares) == 0);
    CHECK(with_spare.ledger.total() == with_spare.wall_us);
  }
}

TEST_CASE("a slow node runs the job at its speed: r*d productive, (1-r)*d degraded", "[trial]") {
  TrialConfig c = config(1000 * s, 10 * s, 0, 0, 500 * s);
  FaultClass slow;
  slow.name = "slow";
  slow.effect = Effect::Slow;
  slow.speed_factor = 0.5;
  slow.action = Act::None;
  slow.detection_us = 100 * s;
  slow.action_us = 100 * s;
  c.faults = {slow};
  const TrialResult r = run_scripted(c, {strike(100 * s)});
  CHECK(hours(r, Category::Degraded) == 100 * s);
  CHECK(hours(r, Category::Productive) == 400 * s);
  CHECK(r.ledger.total() == r.wall_us);
}

TEST_CASE("a hang costs its watchdog timeout as detection", "[trial]") {
  TrialConfig c = config(1000 * s, 10 * s, 60 * s, 0, 2000 * s);
  FaultClass hang = crash(Act::Restart, 600 * s);
  hang.effect = Effect::Hang;
  c.faults = {hang};
  const TrialResult r = run_scripted(c, {strike(50 * s)});
  CHECK(hours(r, Category::Detection) == 600 * s);
  CHECK(hours(r, Category::LostProgress) == 50 * s);
  CHECK(r.ledger.total() == r.wall_us);
}

TEST_CASE("a run given its work ends when the last step completes", "[trial]") {
  TrialConfig c = config(100 * s, 10 * s, 0, 0, kNever);
  c.work_us = 250 * s;
  c.end_us = 100'000 * s;
  const TrialResult r = run_scripted(c, {});
  CHECK(r.finished_work);
  CHECK(r.wall_us == 270 * s);
  CHECK(hours(r, Category::Productive) == 250 * s);
  CHECK(hours(r, Category::CheckpointSave) == 20 * s);
}

TEST_CASE("at the horizon, unsaved work is productive by default, lost progress if only saved work counts", "[trial]") {
  // Saves at 100-110 s and 210-220 s; the horizon at 250 s falls 30 s into the third interval.
  TrialConfig c = config(100 * s, 10 * s, 0, 0, 250 * s);
  const TrialResult kept = run_scripted(c, {});
  CHECK(hours(kept, Category::Productive) == 230 * s);
  CHECK(hours(kept, Category::LostProgress) == 0);
  c.unsaved_work_at_horizon_counts = false;
  const TrialResult saved_only = run_scripted(c, {});
  CHECK(hours(saved_only, Category::Productive) == 200 * s);
  CHECK(hours(saved_only, Category::LostProgress) == 30 * s);
  CHECK(saved_only.ledger.total() == saved_only.wall_us);
  // A run that did its work keeps its last span either way: it ended, nothing is left to save.
  c.work_us = 250 * s;
  c.end_us = 100'000 * s;
  CHECK(hours(run_scripted(c, {}), Category::Productive) == 250 * s);
}

TEST_CASE("a rebooted node's host goes down at the fault and comes back when the restart ends", "[trial]") {
  TrialConfig c = config(100 * s, 10 * s, 20 * s, 0, 400 * s);
  c.faults = {crash(Act::Reboot, 5 * s, 0, 300 * s)};
  EventRecorder log;
  run_scripted(c, {strike(50 * s, 0, 1)}, &log);
  Micros down = -1, up = -1;
  for (const auto& e : log.events) {
    if (e.kind == EventKind::NodeDown && e.node == 1) down = e.time;
    if (e.kind == EventKind::NodeUp && e.node == 1) up = e.time;
  }
  CHECK(down == 50 * s);
  CHECK(up == (50 + 5 + 300 + 20) * s);
}

TEST_CASE("invariant: a fault that comes before one already taken stops the trial with the invariant's name", "[trial][invariant]") {
  TrialConfig c = config(100 * s, 10 * s, 20 * s, 5 * s, 400 * s);
  c.faults = {crash(Act::Restart, 3 * s, 2 * s)};
  // A driver that delivered out of order would give a ledger for a history that never was.
  try {
    run_scripted(c, {strike(250 * s), strike(120 * s)});
    FAIL("the trial took a fault back in time");
  } catch (const InvariantBroken& e) {
    const std::string what = e.what();
    CHECK(what.find("a trial's inputs (faults, its timer) come in time order") != std::string::npos);
    CHECK(what.find("trial/trial.hpp:") != std::string::npos);
    CHECK(what.find("120000000 us after 250000000 us") != std::string::npos);
  }
}
