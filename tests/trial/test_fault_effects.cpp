// Fault effects beyond crash, hang and slow, on scripted faults with ledgers worked out by hand:
// silent data corruption, link flaps, counted-only faults, escalation, planned maintenance.
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

FaultClass fault(Effect effect, Act action, Micros detection, Micros action_us = 0) {
  FaultClass f;
  f.name = std::string(8, 'f');  // not a short literal: GCC 12 warns falsely (-Wrestrict) on those
  f.effect = effect;
  f.action = action;
  f.detection_us = detection;
  f.action_us = action_us;
  return f;
}

TrialConfig config(const FaultClass& f, Micros horizon, Micros restart = 0, Micros restore = 0) {
  TrialConfig c;
  c.job_nodes = 2;
  c.spare_nodes = 1;
  c.repair_us = 100'000 * s;
  c.interval_us = 100 * s;
  c.save_us = 10 * s;
  c.restart_overhead_us = restart;
  c.restore_us = restore;
  c.end_us = horizon;
  c.faults = {f};
  return c;
}

TrialResult run_scripted(const TrialConfig& c, const std::vector<Micros>& strike_times, EventRecorder* log = nullptr) {
  std::vector<FaultStrike> strikes;
  for (Micros at : strike_times) strikes.push_back({at, 0, 0, 3, -1});
  test::Scripted run = test::run_scripted(c, strikes);
  if (log) log->events = std::move(run.events);
  return run.result;
}

int count(const EventRecorder& log, EventKind kind) {
  return static_cast<int>(std::count_if(log.events.begin(), log.events.end(), [kind](const RunEvent& e) { return e.kind == kind; }));
}

}  // namespace

TEST_CASE("silent corruption rolls back past every checkpoint saved after it", "[effects]") {
  // Saves complete at 110, 220, 330, 440 (100 s of work each). Corruption at 150, noticed at 450:
  // the last clean checkpoint is the one of 110, so 300 s of saved work and 10 s unsaved are lost.
  const TrialResult r = run_scripted(config(fault(Effect::Sdc, Act::Restart, 300 * s), 500 * s), {150 * s});
  CHECK(r.ledger[Category::LostProgress] == 310 * s);
  CHECK(r.ledger[Category::Productive] == 150 * s);  // 100 clean + 50 after the restart
  CHECK(r.ledger[Category::CheckpointSave] == 40 * s);
  CHECK(r.ledger.total() == r.wall_us);
  CHECK(r.fault_counts[0] == 1);

  SECTION("a checkpoint whose save began before the corruption is clean") {
    const TrialResult during_save =
        run_scripted(config(fault(Effect::Sdc, Act::Restart, 300 * s), 500 * s), {105 * s});
    // Noticed at 405: back to the save that was under way at 105 (work 100): 200 saved + 75 unsaved lost.
    CHECK(during_save.ledger[Category::LostProgress] == 275 * s);
  }
}

TEST_CASE("a link flap shorter than the watchdog is a stall, a longer one is a hang", "[effects]") {
  const TrialResult short_flap =
      run_scripted(config(fault(Effect::Flap, Act::None, 600 * s, 20 * s), 500 * s), {50 * s});
  CHECK(short_flap.ledger[Category::Degraded] == 20 * s);
  CHECK(short_flap.ledger[Category::LostProgress] == 0);
  CHECK(short_flap.ledger.total() == short_flap.wall_us);

  const TrialResult long_flap =
      run_scripted(config(fault(Effect::Flap, Act::None, 600 * s, 900 * s), 2000 * s), {50 * s});
  CHECK(long_flap.ledger[Category::Detection] == 600 * s);
  CHECK(long_flap.ledger[Category::LostProgress] == 50 * s);
}

TEST_CASE("a counted-only fault (Xid 92 storms) changes nothing but the count", "[effects]") {
  const TrialResult r = run_scripted(config(fault(Effect::None, Act::None, 0), 500 * s), {50 * s, 60 * s});
  CHECK(r.fault_counts[0] == 2);
  CHECK(r.ledger[Category::Productive] + r.ledger[Category::CheckpointSave] == 500 * s);
}

TEST_CASE("repeated faults on the same GPU escalate to replacement", "[effects]") {
  FaultClass f = fault(Effect::Crash, Act::Reboot, 10 * s, 300 * s);
  f.escalation = FaultClass::Escalation{2, 86400 * s, Act::Replace, 120 * s};
  EventRecorder log;
  const TrialResult r = run_scripted(config(f, 5000 * s), {100 * s, 2000 * s}, &log);
  CHECK(count(log, EventKind::Escalated) == 1);
  CHECK(count(log, EventKind::ToRepair) == 1);   // the second fault: replaced
  CHECK(r.ledger[Category::Restart] == 300 * s + 120 * s);  // a reboot, then a swap
  CHECK(r.ledger.total() == r.wall_us);

  SECTION("faults further apart than the window do not escalate") {
    EventRecorder apart;
    run_scripted(config(f, 200'000 * s), {100 * s, 100 * s + 86401 * s}, &apart);
    CHECK(count(apart, EventKind::Escalated) == 0);
  }
}

TEST_CASE("planned maintenance saves first, stops, then restarts", "[effects]") {
  TrialConfig c = config(fault(Effect::None, Act::None, 0), 400 * s, 20 * s, 5 * s);
  c.maintenance = Maintenance{300 * s, 1000 * s, 60 * s};
  const TrialResult r = run_scripted(c, {});
  CHECK(r.ledger[Category::PlannedMaintenance] == 60 * s);
  CHECK(r.ledger[Category::CheckpointSave] == 30 * s);  // two regular saves + the one before maintenance
  CHECK(r.ledger[Category::Productive] == 285 * s);     // 100 + 100 + 80 saved, + 5 after
  CHECK(r.ledger[Category::Restart] == 20 * s);
  CHECK(r.ledger[Category::CheckpointRestore] == 5 * s);
  CHECK(r.ledger[Category::LostProgress] == 0);
  CHECK(r.ledger.total() == r.wall_us);
}

