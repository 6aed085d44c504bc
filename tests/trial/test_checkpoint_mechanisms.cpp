// Checkpoint mechanisms on scripted faults, ledgers worked out by hand: flash (two-phase)
// snapshots with background persists and peer replicas, and save-on-failure.
#include <catch2/catch.hpp>

#include <mutex>

#include "trial/trial.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

//! Interval 100 s; snapshots block 2 s; one in two is persisted, in 30 s; memory restore 5 s,
//! storage restore 50 s, restart 20 s. Snapshots end at 102 (work 100), 204 (200, persisted,
//! safe at 234), 306 (300), 408 (400, persisted).
TrialConfig flash(Act action) {
  FaultClass f;
  f.name = std::string("fault");
  f.effect = Effect::Crash;
  f.action = action;
  TrialConfig c;
  c.job_nodes = 4;
  c.spare_nodes = 4;
  c.repair_us = 100'000 * s;
  c.interval_us = 100 * s;
  c.mechanism = CheckpointMechanism::Flash;
  c.save_us = 2 * s;
  c.persist_us = 30 * s;
  c.persist_every = 2;
  c.memory_restore_us = 5 * s;
  c.restore_us = 50 * s;
  c.restart_overhead_us = 20 * s;
  c.end_us = 500 * s;
  c.faults = {f};
  return c;
}

FaultStrike at(Micros t) { return {t, 0, 1, 0, -1}; }

//! An engine whose peer copies take a fixed time; it remembers the movers of each kind of question.
class PeerPhysics final : public Physics {
 public:
  explicit PeerPhysics(Micros copy_us) : copy_us_(copy_us) {}
  TransferCost cost(const TransferQuestion& q) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    movers_[static_cast<int>(q.what)] = q.movers;
    const bool peer = q.what == Transfer::Replicate || q.what == Transfer::PeerRestore;
    return {peer ? copy_us_ : 30 * s, 1.0};
  }
  const char* name() const override { return "peer test"; }
  int asked(Transfer what) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return movers_[static_cast<int>(what)];
  }

 private:
  Micros copy_us_;
  mutable std::mutex mutex_;
  mutable int movers_[5] = {};
};

}  // namespace

TEST_CASE("flash: a crash that leaves the host up restores the newest snapshot from memory", "[mechanisms]") {
  const TrialResult r = test::run_scripted(flash(Act::Restart), {at(350 * s)}).result;
  CHECK(r.ledger[Category::LostProgress] == 44 * s);       // only since the snapshot of 306
  CHECK(r.ledger[Category::CheckpointRestore] == 5 * s);   // from memory
  CHECK(r.ledger[Category::Productive] == 423 * s);
  CHECK(r.ledger[Category::CheckpointSave] == 8 * s);      // four 2-s snapshots block; persists do not
  CHECK(r.ledger.total() == r.wall_us);
}

TEST_CASE("flash: a lost node falls back to the newest persisted snapshot", "[mechanisms]") {
  const TrialResult r = test::run_scripted(flash(Act::Reboot), {at(350 * s)}).result;
  CHECK(r.ledger[Category::LostProgress] == (100 + 44) * s);  // the unpersisted snapshot of 306, and since
  CHECK(r.ledger[Category::CheckpointRestore] == 50 * s);     // from storage
  CHECK(r.ledger[Category::Productive] == 280 * s);
  CHECK(r.ledger.total() == r.wall_us);

  SECTION("when storage holds the newest snapshot, only the lost node reads it; the others load theirs from memory") {
    // At 240 s the snapshot of 204 (work 200) is persisted (at 234): the lost node reads it from
    // storage (50 s) while the three others load it from memory (60 s here): the restore is 60 s.
    TrialConfig c = flash(Act::Reboot);
    c.memory_restore_us = 60 * s;
    const TrialResult slower = test::run_scripted(c, {at(240 * s)}).result;
    CHECK(slower.ledger[Category::LostProgress] == 36 * s);
    CHECK(slower.ledger[Category::CheckpointRestore] == 60 * s);
    CHECK(slower.ledger.total() == slower.wall_us);
  }
  SECTION("a persist still in flight does not count") {
    const TrialResult early = test::run_scripted(flash(Act::Reboot), {at(230 * s)}).result;
    CHECK(early.ledger[Category::LostProgress] == (200 + 26) * s);  // the persist of 204 lands at 234
  }
  SECTION("a peer's replica does") {
    TrialConfig c = flash(Act::Reboot);
    c.peer_replicas = true;
    c.replication_us = 10 * s;
    c.peer_restore_us = 8 * s;
    const TrialResult peer = test::run_scripted(c, {at(350 * s)}).result;
    CHECK(peer.ledger[Category::LostProgress] == 44 * s);       // the snapshot of 306 was on a peer by 316
    CHECK(peer.ledger[Category::CheckpointRestore] == 8 * s);
  }
  SECTION("a replica priced by the engine's physics") {
    // The engine says a copy to or from a peer takes 8 s, while the nodes that kept their memory
    // load their snapshot in 5 s: the restore takes 8 s.
    TrialConfig c = flash(Act::Reboot);
    c.peer_replicas = true;
    auto physics = std::make_shared<PeerPhysics>(8 * s);
    c.physics = physics;
    c.physics_replicas = c.physics_peer_restores = true;
    const TrialResult peer = test::run_scripted(c, {at(350 * s)}).result;
    CHECK(peer.ledger[Category::LostProgress] == 44 * s);
    CHECK(peer.ledger[Category::CheckpointRestore] == 8 * s);
    CHECK(peer.ledger.total() == peer.wall_us);
    // Every node replicates; only the lost one reads back.
    CHECK(physics->asked(Transfer::Replicate) == 4);
    CHECK(physics->asked(Transfer::PeerRestore) == 1);
    CHECK(physics->asked(Transfer::Persist) == 0);  // the scenario gave the persist's time

    // Copies of 150 s, longer than a snapshot cycle: by 350 s only the snapshot of 102 is on a peer
    // (at 252), older than the one persisted at 234, so storage serves the restore.
    c.physics = std::make_shared<PeerPhysics>(150 * s);
    const TrialResult slow = test::run_scripted(c, {at(350 * s)}).result;
    CHECK(slow.ledger[Category::LostProgress] == (100 + 44) * s);
    CHECK(slow.ledger[Category::CheckpointRestore] == 50 * s);
  }
}

TEST_CASE("save-on-failure: a crash that leaves the host up saves the live state first", "[mechanisms]") {
  FaultClass f;
  f.name = std::string("process");
  f.effect = Effect::Crash;
  f.action = Act::Restart;
  f.detection_us = 3 * s;
  TrialConfig c;
  c.job_nodes = 2;
  c.interval_us = 100 * s;
  c.save_us = 10 * s;
  c.restore_us = 5 * s;
  c.restart_overhead_us = 20 * s;
  c.end_us = 300 * s;
  c.save_on_failure = true;
  c.faults = {f};
  const TrialResult r = test::run_scripted(c, {at(150 * s)}).result;
  CHECK(r.ledger[Category::LostProgress] == 0);
  CHECK(r.ledger[Category::CheckpointSave] == 30 * s);  // two regular saves and the one on failure
  CHECK(r.ledger[Category::Productive] == 242 * s);
  CHECK(r.ledger.total() == r.wall_us);

  SECTION("a lost node cannot save") {
    c.faults[0].action = Act::Reboot;
    const TrialResult lost = test::run_scripted(c, {at(150 * s)}).result;
    CHECK(lost.ledger[Category::LostProgress] == 40 * s);
  }
}

