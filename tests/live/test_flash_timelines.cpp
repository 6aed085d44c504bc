// A restart from an older step forks a timeline: the old one's snapshots and shards must neither
// complete a step with the new one's, nor outrank them in memory, nor stop them reaching the disk.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "live/checkpoint/disk_store.hpp"
#include "live/checkpoint/flash_engine.hpp"
#include "live/flash_fixture.hpp"
#include "live/flash_pattern.hpp"

using namespace ctwin::flash;
using ctwin::test::fill_pattern;
using ctwin::test::Fixture;
using ctwin::test::Ranks;

namespace {

//! $CTWIN_GENERATION while it lives, as the agent sets it for a generation's trainers.
struct Generation {
  explicit Generation(int g) { ::setenv("CTWIN_GENERATION", std::to_string(g).c_str(), 1); }
  ~Generation() { ::unsetenv("CTWIN_GENERATION"); }
};

}  // namespace

TEST_CASE("flash checkpoint: a restart from an older step forks a timeline: the old one's later shards neither complete a step nor prune the restore step", "[live][flash]") {
  // The live idle_flood failure: rank 1 died at step 45; rank 0 was stopped late and persisted 50
  // and 60 on the abandoned timeline. Generation 2 restores 40. Rank 1 restores from memory first
  // and persists its new 50: with rank 0's stale 50 that step looked complete, and keep_last 1 then
  // dropped 40 before rank 0, slower, could read it from disk.
  Fixture f;
  Ranks buffers(2);
  EngineOptions options = f.options(false);
  options.keep_last = 1;
  std::vector<std::unique_ptr<Engine>> engines;
  const auto save = [&](std::size_t r, std::int64_t step) {
    for (std::size_t i = 0; i < buffers.ranks[r].buffers.size(); ++i) fill_pattern(buffers.ranks[r].buffers[i], step, i + 16 * r);
    engines[r]->save(step);
    REQUIRE(engines[r]->wait_persisted(step, 30));
  };
  {
    const Generation first(1);
    buffers.attach(engines, options);
    save(0, 40), save(1, 40);
    save(0, 50), save(0, 60);  // rank 1 is dead: rank 0 trains on alone
  }
  CHECK(engines[0]->restorable_steps() == std::vector<std::int64_t>{60, 50, 40});  // 40 from disk alone
  engines.clear();
  const Generation second(2);
  buffers.attach(engines, options);
  REQUIRE(engines[1]->restore_step(40).source == RestoreSource::Memory);
  save(1, 50);  // beside rank 0's shard of 50 from generation 1: not complete, and 40 stays
  CHECK(engines[1]->restorable_steps() == std::vector<std::int64_t>{50, 40});  // its memory holds 50 and 40
  CHECK(engines[0]->restorable_steps() == std::vector<std::int64_t>{60, 50, 40});
  const DiskStore store(f.disk.path, 0, 2, 1);
  CHECK(store.complete_steps() == std::vector<std::int64_t>{40});
  const auto restored = engines[0]->restore_step(40);
  CHECK(restored.source == RestoreSource::Disk);
  CHECK(restored.step == 40);
  save(0, 50);  // now from generation 2 on both ranks: complete, and 40 goes
  CHECK(store.complete_steps() == std::vector<std::int64_t>{50});
  CHECK(buffers.hold(50));
  CHECK(f.step_folders() == std::vector<std::string>{"step-000000000050", "step-000000000060"});  // 60 may still be completed
  save(0, 60), save(1, 60);
  CHECK(store.complete_steps() == std::vector<std::int64_t>{60});
}

TEST_CASE("flash checkpoint: an in-process restore of an older step persists the new timeline's steps, not the old one's", "[live][flash]") {
  // A surviving rank keeps its engine across an in-process restart. It had persisted step 50; the
  // job restarts from 40 (its peer never saved 50). Its new step 50 must reach the disk: the
  // persister had counted 50 as done, and wait_persisted(50) said so of the old timeline's shard.
  Fixture f;
  auto options = f.options(false);
  const DiskStore store(f.disk.path, 0, 1, 2);
  const Generation first(1);
  Engine engine(options);
  f.attach(engine);
  for (const std::int64_t step : {40, 50}) {
    f.fill(step);
    engine.save(step);
    REQUIRE(engine.wait_persisted(step, 30));
  }
  REQUIRE(store.manifest(50)->generation == 1);
  const Generation second(2);
  const auto restored = engine.restore_step(40);
  CHECK(restored.source == RestoreSource::Memory);
  CHECK(engine.restorable_steps() == std::vector<std::int64_t>{50, 40});  // 50 on disk only now: its slot went
  f.fill(50);
  engine.save(50);
  REQUIRE(engine.wait_persisted(50, 30));
  CHECK(store.manifest(50)->generation == 2);
}

TEST_CASE("flash checkpoint: a start from scratch empties the old snapshots, and its own steps reach the disk", "[live][flash]") {
  // A job that restarts from scratch (no step every rank holds) on a node whose memory still holds
  // step 130: the persister took that snapshot as the newest and never wrote the new steps below it.
  Fixture f;
  auto options = f.options(false);
  {
    const Generation first(1);
    Engine engine(options);
    f.attach(engine);
    f.fill(130);
    engine.save(130);
  }
  const Generation second(2);
  Engine engine(options);
  f.attach(engine);
  CHECK(engine.restorable_steps() == std::vector<std::int64_t>{130});
  CHECK(engine.restore_step(-1).step == -1);
  CHECK(engine.restorable_steps().empty());
  f.fill(10);
  engine.save(10);
  REQUIRE(engine.wait_persisted(10, 30));
  const DiskStore store(f.disk.path, 0, 1, 2);
  REQUIRE(store.manifest(10));
  CHECK(store.manifest(10)->generation == 2);
  CHECK(store.complete_steps() == std::vector<std::int64_t>{10});
}
