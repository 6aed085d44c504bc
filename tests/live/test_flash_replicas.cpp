// One shard per replica (issue 36, item 8): under data parallelism only the first replica's ranks
// persist; the others keep their snapshots in memory and, from disk, read their replica-mate's shard.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "live/checkpoint/flash_engine.hpp"
#include "live/checkpoint/flash_error.hpp"
#include "live/flash_fixture.hpp"
#include "live/supervisor/job_launch.hpp"

namespace fs = std::filesystem;
using ctwin::flash::Engine;
using ctwin::flash::EngineOptions;
using ctwin::flash::FlashError;
using ctwin::flash::RestoreSource;
using ctwin::flash::SlotLocation;
using ctwin::test::Fixture;
using ctwin::test::names_in;

namespace {

//! The job's ranks, each with its own buffers (`Fixture`), over one shared shm and persist folder.
//! Replica-mates hold the same state: rank r's buffers carry the pattern of shard r mod `replica_ranks`.
struct ReplicatedJob {
  Fixture shared;
  std::vector<Fixture> ranks;
  std::vector<std::unique_ptr<Engine>> engines;
  int replica_ranks;
  ReplicatedJob(int world, int per_replica) : ranks(static_cast<std::size_t>(world)), replica_ranks(per_replica) { open("job", per_replica); }
  void open(const std::string& name, int per_replica) {
    engines.clear();
    for (std::size_t r = 0; r < ranks.size(); ++r) engines.push_back(engine(static_cast<int>(r), name, per_replica));
  }
  std::unique_ptr<Engine> engine(int rank, const std::string& name, int per_replica) {
    EngineOptions o = shared.options();
    o.name = name;
    o.rank = rank;
    o.world = static_cast<int>(ranks.size());
    o.replica_ranks = per_replica;
    auto e = std::make_unique<Engine>(o);
    auto& b = ranks[static_cast<std::size_t>(rank)].buffers;
    for (std::size_t i = 0; i < b.size(); ++i) e->register_buffer("buffer." + std::to_string(i), b[i].data(), b[i].size());
    return e;
  }
  void fill(std::int64_t step) {
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (std::size_t i = 0; i < ranks[r].buffers.size(); ++i)
        ctwin::test::fill_pattern(ranks[r].buffers[i], step, i + 16 * (r % static_cast<std::size_t>(replica_ranks)));
  }
  bool holds(std::size_t rank, std::int64_t step) const {
    for (std::size_t i = 0; i < ranks[rank].buffers.size(); ++i)
      if (!ctwin::test::holds_pattern(ranks[rank].buffers[i], step, i + 16 * (rank % static_cast<std::size_t>(replica_ranks)))) return false;
    return true;
  }
  void save(std::int64_t step) {
    fill(step);
    for (auto& e : engines) e->save(step);
    for (auto& e : engines) REQUIRE(e->wait_persisted(step, 30));
  }
  std::string folder(std::int64_t step) const {
    char name[32];
    std::snprintf(name, sizeof name, "/step-%012lld", static_cast<long long>(step));
    return shared.disk.path + name;
  }
};

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("flash checkpoint: one shard per replica: only the first replica persists, every rank restores", "[live][flash]") {
  // World 4 of two replicas of two ranks (tensor parallel 2, data parallel 2).
  ReplicatedJob job(4, 2);
  job.save(7);
  // Two shards, not four; the manifest says the step's shards and its replicas.
  CHECK(names_in(job.folder(7)) == std::vector<std::string>{"rank-00000.manifest", "rank-00000.shard", "rank-00001.manifest", "rank-00001.shard"});
  const std::string manifest = text_of(job.folder(7) + "/rank-00001.manifest");
  CHECK(manifest.find("\nworld 2\nreplicas 2\n") != std::string::npos);
  CHECK(job.engines[0]->persisted_step() == 7);
  CHECK(job.engines[3]->persisted_step() == -1);  // it wrote nothing

  // In memory, each rank takes its own snapshot.
  for (auto& r : job.ranks) r.scramble();
  for (std::size_t r = 0; r < 4; ++r) {
    const auto restored = job.engines[r]->restore_step(7);
    CHECK(restored.source == RestoreSource::Memory);
    CHECK(job.holds(r, 7));
  }
  // A node that lost its memory (slots of another name: none): rank 3 reads shard 1, rank 2 shard 0.
  job.engines.clear();
  for (auto& r : job.ranks) r.scramble();
  for (const int rank : {2, 3}) {
    const auto fresh = job.engine(rank, "job-after-reboot", 2);
    const auto restored = fresh->restore();
    CHECK(restored.step == 7);
    CHECK(restored.source == RestoreSource::Disk);
    CHECK(job.holds(static_cast<std::size_t>(rank), 7));
  }
  // The agent offers it for ranks 2 and 3 (their shards verified), with nothing in memory.
  CHECK(ctwin::live::steps_every_rank_holds(SlotLocation{job.shared.shm.path, "job-elsewhere", 2}, 2, job.shared.disk.path, 4) ==
        std::vector<std::int64_t>{7});
  // A job of another world with a sharded state does not take it: its shards are not theirs.
  EngineOptions other = job.shared.options();
  other.name = "other-world";
  other.world = 2;
  Engine sharded(other);
  job.shared.attach(sharded);
  CHECK(sharded.restore_step(7).step == -1);
}

TEST_CASE("flash checkpoint: one shard per replica: the agent's persist after a crash skips replica-mates", "[live][flash]") {
  // Saved in memory, never persisted (the trainers died at once): the agent persists what is left.
  Fixture f;
  EngineOptions o = f.options();
  o.persist_dir.clear();  // memory only: nothing reached the disk
  o.world = 2;
  o.replica_ranks = 1;
  std::vector<std::unique_ptr<Engine>> engines;
  for (const int rank : {0, 1}) {
    o.rank = rank;
    engines.push_back(std::make_unique<Engine>(o));
    f.attach(*engines.back());
  }
  f.fill(3);
  for (auto& e : engines) e->save(3);
  for (const int rank : {0, 1}) {
    ctwin::flash::DiskStore store(f.disk.path, rank, 2, 2);
    const auto step = Engine::persist_newest({f.shm.path, "job", rank}, store, -1);
    CHECK(step == (rank == 0 ? std::optional<std::int64_t>(3) : std::nullopt));
  }
  CHECK(names_in(f.disk.path + "/step-000000000003") == std::vector<std::string>{"rank-00000.manifest", "rank-00000.shard"});
  // Both ranks of the job count step 3 as held.
  CHECK(ctwin::live::steps_every_rank_holds(SlotLocation{f.shm.path, "nothing-in-memory", 0}, 2, f.disk.path, 2) == std::vector<std::int64_t>{3});
}

TEST_CASE("flash checkpoint: one shard per replica prunes the shards an earlier run wrote for every rank", "[live][flash]") {
  // Keep 2. Steps 1 and 2 saved with every rank persisting, steps 3 and 4 with one shard per replica:
  // steps 1 and 2 go whole, rank 1's files too, though rank 1 persists nothing any more.
  ReplicatedJob job(2, 1);
  job.open("job", 2);  // every rank persists its own
  job.save(1);
  job.save(2);
  CHECK(names_in(job.folder(2)).size() == 4);
  job.open("job", 1);
  job.save(3);
  job.save(4);
  CHECK(job.shared.step_folders() == std::vector<std::string>{"step-000000000003", "step-000000000004"});
  CHECK(names_in(job.folder(4)) == std::vector<std::string>{"rank-00000.manifest", "rank-00000.shard"});
}

TEST_CASE("flash checkpoint: ranks per replica that do not divide the world are refused", "[live][flash]") {
  Fixture f;
  EngineOptions o = f.options();
  o.world = 4;
  o.replica_ranks = 3;
  CHECK_THROWS_WITH(Engine(o), Catch::Contains("ranks per replica 3 do not divide the world, 4"));
  o.replica_ranks = 0;
  ::setenv("CTWIN_FLASH_REPLICA_RANKS", "two", 1);
  CHECK_THROWS_WITH(Engine(o), Catch::Contains("$CTWIN_FLASH_REPLICA_RANKS 'two'"));
  ::setenv("CTWIN_FLASH_REPLICA_RANKS", "2", 1);
  o.rank = 3;
  {
    Engine mate(o);  // rank 3 of two replicas of two: persists nothing
    f.attach(mate);
    f.fill(1);
    mate.save(1);
    CHECK_FALSE(mate.wait_persisted(1, 0.2));  // its replica-mate's shard never came
  }
  ::unsetenv("CTWIN_FLASH_REPLICA_RANKS");
  CHECK(f.step_folders().empty());
}
