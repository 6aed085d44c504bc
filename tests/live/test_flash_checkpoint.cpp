// The flash checkpoint engine: round trips through shared memory and disk, fallbacks, pruning,
// full /dev/shm and full disk (crash consistency under SIGKILL: test_flash_crash_consistency.cpp).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "live/checkpoint/ckpt_bench.hpp"
#include "live/checkpoint/flash_engine.hpp"
#include "live/checkpoint/flash_error.hpp"
#include "live/flash_fixture.hpp"
#include "live/flash_pattern.hpp"
#include "live/supervisor/job_launch.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using namespace ctwin::flash;
using ctwin::test::fill_pattern;
using ctwin::test::holds_pattern;

using ctwin::test::Fixture;
using ctwin::test::Ranks;
using ctwin::test::TempDir;
using ctwin::test::names_in;


TEST_CASE("flash checkpoint: save returns with the state in shared memory, restore takes the newest", "[live][flash]") {
  Fixture f;
  {
    Engine engine(f.options());
    f.attach(engine);
    CHECK(engine.restore().step == -1);
    for (std::int64_t step = 1; step <= 3; ++step) {
      f.fill(step);
      const auto stats = engine.save(step);
      CHECK(stats.bytes == (3u << 20) + (1u << 20) + 3 + 4097);
      // Each step reaches the disk before the next save: a persister that falls behind persists
      // the newest snapshot and skips the ones between (by design), which would leave 1 and 3.
      CHECK(engine.wait_persisted(step, 30));
    }
  }
  f.scramble();
  Engine restarted(f.options());
  f.attach(restarted);
  const auto r = restarted.restore();
  CHECK(r.step == 3);
  CHECK(r.source == RestoreSource::Memory);
  CHECK(f.holds(3));
  // keep_last = 2: steps 2 and 3 stay on disk.
  CHECK(f.step_folders() == std::vector<std::string>{"step-000000000002", "step-000000000003"});
}

TEST_CASE("flash checkpoint: files are the owner's alone (0600 in 0700) unless $CTWIN_FLASH_FILE_MODE says", "[live][flash]") {
  const auto mode_of = [](const fs::path& p) { return static_cast<unsigned>(fs::status(p).permissions() & fs::perms::mask); };
  for (const auto& [setting, file, folder] : {std::tuple{"", 0600u, 0700u}, std::tuple{"0640", 0640u, 0750u}}) {
    if (*setting) ::setenv("CTWIN_FLASH_FILE_MODE", setting, 1);
    const mode_t umask_before = ::umask(0);  // the mode configured, whatever the umask
    Fixture f;
    {
      Engine engine(f.options());
      f.attach(engine);
      f.fill(1);
      engine.save(1);
      REQUIRE(engine.wait_persisted(1, 30));
    }
    ::umask(umask_before);
    ::unsetenv("CTWIN_FLASH_FILE_MODE");
    const fs::path step = fs::path(f.disk.path) / "step-000000000001";
    CHECK(mode_of(step) == folder);
    for (const char* name : {"rank-00000.shard", "rank-00000.manifest"}) CHECK(mode_of(step / name) == file);
  }
  ::setenv("CTWIN_FLASH_FILE_MODE", "0777", 1);
  Fixture f;
  CHECK_THROWS_WITH(Engine(f.options()), Catch::Contains("CTWIN_FLASH_FILE_MODE 0777"));
  ::unsetenv("CTWIN_FLASH_FILE_MODE");
}

TEST_CASE("flash checkpoint: a step an earlier attempt persisted counts as persisted at once", "[live][flash]") {
  // A trainer restored at its last step saves nothing new, then waits for that step to be on
  // disk before it says done: it is, and the wait must not last until the timeout.
  Fixture f;
  {
    Engine engine(f.options());
    f.attach(engine);
    f.fill(7);
    engine.save(7);
    REQUIRE(engine.wait_persisted(7, 30));
  }
  Engine restarted(f.options());
  f.attach(restarted);
  REQUIRE(restarted.restore().step == 7);
  // No time to wait at all: only a step already on disk can be reported persisted.
  CHECK(restarted.wait_persisted(7, 0));
  CHECK(restarted.persisted_step() == 7);
}

TEST_CASE("flash checkpoint: without shared memory the newest verified disk checkpoint is restored", "[live][flash]") {
  Fixture f;
  {
    Engine engine(f.options());
    f.attach(engine);
    for (std::int64_t step = 10; step <= 12; ++step) {
      f.fill(step);
      engine.save(step);
      REQUIRE(engine.wait_persisted(step, 30));
    }
  }
  for (const auto& e : fs::directory_iterator(f.shm.path)) fs::remove(e.path());  // the node rebooted
  // A flipped byte in step 12's shard: its checksum fails and step 11 is taken instead.
  {
    std::fstream shard(f.disk.path + "/step-000000000012/rank-00000.shard", std::ios::in | std::ios::out | std::ios::binary);
    shard.seekp(1000);
    shard.put('\x5a');
  }
  f.scramble();
  Engine restarted(f.options());
  f.attach(restarted);
  const auto r = restarted.restore();
  CHECK(r.step == 11);
  CHECK(r.source == RestoreSource::Disk);
  REQUIRE(r.skipped.size() == 1);
  CHECK(r.skipped[0].find("fails its checksum") != std::string::npos);
  CHECK(f.holds(11));
  // The disk copy went through shared memory: a second restore finds it there.
  f.scramble();
  const auto again = restarted.restore();
  CHECK(again.source == RestoreSource::Memory);
  CHECK(f.holds(11));
}

TEST_CASE("flash checkpoint: a layout that changed is not restored into the wrong buffers", "[live][flash]") {
  Fixture f;
  {
    Engine engine(f.options());
    f.attach(engine);
    f.fill(5);
    engine.save(5);
    REQUIRE(engine.wait_persisted(5, 30));
  }
  Engine other(f.options());
  std::vector<unsigned char> different(100);
  other.register_buffer("buffer.0", different.data(), different.size());
  CHECK(other.restore().step == -1);
}

TEST_CASE("flash checkpoint: /dev/shm too small is a clear error and the previous snapshot stays", "[live][flash]") {
  Fixture f;
  {
    Engine engine(f.options(false));
    f.attach(engine);
    f.fill(1);
    engine.save(1);
    // A buffer larger than the shared-memory folder can hold (address space only, never touched).
    const std::size_t huge = std::size_t(1) << 40;
    void* reserved = ::mmap(nullptr, huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(reserved != MAP_FAILED);
    engine.register_buffer("huge", reserved, huge);
    try {
      engine.save(2);
      FAIL("save succeeded");
    } catch (const FlashError& e) {
      CHECK(e.kind() == ErrorKind::SharedMemory);
      CHECK(std::string(e.what()).find("is too small") != std::string::npos);
      CHECK(std::string(e.what()).find(f.shm.path) != std::string::npos);
    }
    ::munmap(reserved, huge);
  }
  f.scramble();
  Engine restarted(f.options(false));
  f.attach(restarted);
  CHECK(restarted.restore().step == 1);
  CHECK(f.holds(1));
}

TEST_CASE("flash checkpoint: a full disk fails the persist, not the save, and the previous checkpoint stays", "[live][flash]") {
  Fixture f;
  Engine engine(f.options());
  f.attach(engine);
  f.fill(1);
  engine.save(1);
  REQUIRE(engine.wait_persisted(1, 30));
  // The file-size limit stands in for a full disk: writes past 1 MiB fail with EFBIG.
  rlimit old{};
  ::getrlimit(RLIMIT_FSIZE, &old);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 1 << 20;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  f.fill(2);
  CHECK_NOTHROW(engine.save(2));  // the trainer goes on: the snapshot is in memory
  std::string error;
  try {
    engine.wait_persisted(2, 30);
  } catch (const FlashError& e) {
    error = e.what();
    CHECK(e.kind() == ErrorKind::Persist);
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  CHECK(error.find("disk full") != std::string::npos);
  CHECK(error.find("rank-00000.shard") != std::string::npos);
  // Nothing of step 2 on disk, no temporaries; step 1 restores from disk.
  CHECK(f.step_folders() == std::vector<std::string>{"step-000000000001"});
  EngineOptions disk_only = f.options(false);
  TempDir empty_shm("/dev/shm");
  disk_only.shm_dir = empty_shm.path;
  Engine from_disk(disk_only);
  f.attach(from_disk);
  f.scramble();
  CHECK(from_disk.restore().step == 1);
  CHECK(f.holds(1));
}


TEST_CASE("ctwin live ckpt-bench: throughputs with their ceilings from the same run, exit 3 without a GPU", "[live][flash][process]") {
  TempDir disk(fs::temp_directory_path().string());
  const std::string json = disk.path + "/bench.json";
  const auto [code, text] = ctwin::test::run_ctwin_live("ckpt-bench --backend cpu --size 32MiB --iterations 2 --persist-dir " +
                                                   disk.path + " --json " + json);
  INFO(text);
  REQUIRE(code == 0);
  const auto r = ctwin::test::read_json(json);
  CHECK(r.at("schema_version") == 1);
  CHECK(r.at("command") == "live ckpt-bench");
  for (const char* key : {"snapshot_bytes_per_s", "restore_bytes_per_s", "persist_bytes_per_s", "d2h_ceiling_bytes_per_s",
                          "disk_ceiling_bytes_per_s", "snapshot_of_d2h"})
    CHECK(r.at(key).get<double>() > 0);
  CHECK(text.find("% of memcpy device->host") != std::string::npos);
  // A long run says where it is: a line per round (stderr).
  CHECK(text.find("ckpt-bench: round 2/2: ceilings") != std::string::npos);
  CHECK(text.find("ckpt-bench: round 2/2: snapshot") != std::string::npos);
  // It cleans up after itself: the persist folder holds only the report, and the ceiling's
  // shared-memory file is gone.
  CHECK(std::distance(fs::directory_iterator(disk.path), fs::directory_iterator{}) == 1);
  for (const auto& e : fs::directory_iterator("/dev/shm")) CHECK(e.path().filename().string().rfind("ctwin-ceiling.", 0) != 0);
  CHECK(ctwin::test::run_ctwin_live("ckpt-bench --backend cpu --size 1 --persist-dir " + disk.path).first == 2);
  CHECK(ctwin::test::run_ctwin_live("ckpt-bench --backend cpu --persist-dir /does/not/exist").first == 2);
  if (!fs::exists("/proc/driver/nvidia/gpus")) CHECK(ctwin::test::run_ctwin_live("ckpt-bench --persist-dir " + disk.path).first == 3);
}

TEST_CASE("flash checkpoint: a failed persist is reported as failed, whatever an earlier engine persisted", "[live][flash]") {
  // Engine A persists steps 1-5 and closes; engine B, in the same process, fails its first persist.
  // Its persister thread reuses A's stack: a miscompiled std::optional once carried A's step 5 into B.
  Fixture a;
  {
    Engine engine(a.options());
    a.attach(engine);
    for (std::int64_t step = 1; step <= 5; ++step) {
      a.fill(step);
      engine.save(step);
      REQUIRE(engine.wait_persisted(step, 30));
    }
  }
  Fixture b;
  EngineOptions o = b.options();
  o.name = "job-b";
  // Its step folder cannot be made: a file stands where the folder would go.
  std::ofstream(b.disk.path + "/step-000000000001") << "in the way";
  Engine engine(o);
  b.attach(engine);
  b.fill(1);
  engine.save(1);
  std::string error;
  bool persisted = true;
  try {
    persisted = engine.wait_persisted(1, 30);
  } catch (const FlashError& e) {
    persisted = false;
    error = e.what();
  }
  CHECK_FALSE(persisted);
  CHECK(error.find("cannot create the checkpoint folder") != std::string::npos);
  CHECK(engine.persisted_step() == -1);
  CHECK(engine.persist_error() == error);
  CHECK(names_in(b.disk.path) == std::vector<std::string>{"step-000000000001"});  // only what was in the way
  CHECK(fs::is_regular_file(b.disk.path + "/step-000000000001"));
}

TEST_CASE("flash checkpoint: ranks restore the newest step every rank has, not each its own", "[live][flash]") {
  // World 2: rank 0 saves step 2, rank 1 dies before saving it. Both must restore step 1.
  Fixture f;
  Ranks buffers(2);
  {
    std::vector<std::unique_ptr<Engine>> engines;
    buffers.attach(engines, f.options(false));
    for (std::int64_t step = 1; step <= 2; ++step)
      for (std::size_t r = 0; r < 2; ++r) {
        if (step == 2 && r == 1) break;  // rank 1 died
        for (std::size_t i = 0; i < buffers.ranks[r].buffers.size(); ++i)
          fill_pattern(buffers.ranks[r].buffers[i], step, i + 16 * r);
        engines[r]->save(step);
      }
  }
  std::vector<std::unique_ptr<Engine>> engines;
  buffers.attach(engines, f.options(false));
  CHECK(engines[0]->restorable_steps() == std::vector<std::int64_t>{2, 1});
  CHECK(engines[1]->restorable_steps() == std::vector<std::int64_t>{1});
  for (auto& engine : engines) {
    const auto r = engine->restore();
    CHECK(r.step == 1);
    CHECK(r.source == RestoreSource::Memory);
  }
  CHECK(buffers.hold(1));
  // Ranks on other hosts (their slots not seen here) agree through the trainer's collective.
  std::vector<std::unique_ptr<Engine>> again;
  buffers.attach(again, f.options(false));
  const Engine::StepAgreement intersect = [&](const std::vector<std::int64_t>& mine) {
    std::vector<std::int64_t> common;
    const auto other = again[1]->restorable_steps();
    for (const auto s : mine)
      if (std::find(other.begin(), other.end(), s) != other.end()) common.push_back(s);
    return common;
  };
  CHECK(again[0]->restore(intersect).step == 1);
}

TEST_CASE("flash checkpoint: a missing shared-memory folder is said to be missing, not too small", "[live][flash]") {
  EngineOptions o;
  o.name = "job";
  o.shm_dir = "/dev/shm/ctwin-no-such-folder-" + std::to_string(::getpid());
  try {
    Engine engine(o);
    FAIL("the engine opened");
  } catch (const FlashError& e) {
    CHECK(e.kind() == ErrorKind::SharedMemory);
    CHECK(std::string(e.what()).find("does not exist") != std::string::npos);
    CHECK(std::string(e.what()).find("too small") == std::string::npos);
  }
}

TEST_CASE("ckpt-bench: shared memory for two slots but not for the ceiling's mapping beside them is refused first",
          "[live][flash][process]") {
  Fixture f;
  CkptBenchOptions o;
  o.shm_dir = f.shm.path;
  o.persist_dir = f.disk.path;
  o.bytes = free_bytes(f.shm.path) / 2 + (std::uint64_t(1) << 20);  // two fit, three do not
  try {
    run_ckpt_bench(o);
    FAIL("ckpt-bench ran");
  } catch (const FlashError& e) {
    CHECK(e.kind() == ErrorKind::Usage);  // exit 2: --size does not fit this folder
    CHECK(std::string(e.what()).find("too small for ckpt-bench") != std::string::npos);
  }
  CHECK(names_in(f.shm.path).empty());
  CHECK(names_in(f.disk.path).empty());
}

TEST_CASE("flash checkpoint: a stray step- folder in the persist dir is left alone", "[live][flash]") {
  Fixture f;
  fs::create_directory(f.disk.path + "/step-abcdefghijkl");
  fs::create_directory(f.disk.path + "/step-12");
  Engine engine(f.options());
  f.attach(engine);
  for (std::int64_t step = 1; step <= 3; ++step) {
    f.fill(step);
    engine.save(step);
    REQUIRE(engine.wait_persisted(step, 30));
  }
  CHECK(f.step_folders() ==
        std::vector<std::string>{"step-000000000002", "step-000000000003", "step-12", "step-abcdefghijkl"});
}

TEST_CASE("flash checkpoint: replicated state restores at another world size (elastic shrink and regrow)", "[live][flash]") {
  Fixture f;
  {  // the job shrunk to one replica: rank 0 of world 1 saves steps 20 and 21
    EngineOptions o = f.options();
    o.replicated = true;
    Engine engine(o);
    f.attach(engine);
    for (std::int64_t step = 20; step <= 21; ++step) {
      f.fill(step);
      engine.save(step);
      REQUIRE(engine.wait_persisted(step, 30));
    }
  }
  // It grows back: rank 1 of world 2 (a spare, nothing in its memory) restores step 21 from rank 0's shard.
  f.scramble();
  EngineOptions grown = f.options();
  grown.name = "job-on-the-spare";  // its own slots: nothing in memory
  grown.rank = 1;
  grown.world = 2;
  grown.replicated = true;
  {
    Engine spare(grown);
    f.attach(spare);
    const auto r = spare.restore_step(21);
    CHECK(r.step == 21);
    CHECK(r.source == RestoreSource::Disk);
    CHECK(f.holds(21));
  }
  // Not replicated (a sharded state), the same step is not this rank's to restore.
  grown.replicated = false;
  grown.name = "job-sharded";
  Engine sharded(grown);
  f.attach(sharded);
  CHECK(sharded.restore_step(21).step == -1);
}

TEST_CASE("steps held: a step whose shard fails its checksum is not offered to the master, and is said", "[live][flash]") {
  Fixture f;
  {
    Engine engine(f.options(false));
    f.attach(engine);
    for (const std::int64_t step : {4, 8}) {
      f.fill(step);
      engine.save(step);
      REQUIRE(engine.wait_persisted(step, 30));
    }
  }
  for (const auto& name : names_in(f.shm.path)) fs::remove(fs::path(f.shm.path) / name);  // the node lost its memory
  const auto shard = fs::path(f.disk.path) / "step-000000000008" / "rank-00000.shard";
  REQUIRE(fs::exists(shard));
  {  // one byte of step 8's shard flipped
    std::fstream io(shard, std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(100);
    const int byte = io.get();
    io.seekp(100);
    io.put(static_cast<char>(byte ^ 0x10));
  }
  std::vector<std::string> refused;
  const SlotLocation first{f.shm.path, "job", 0};
  CHECK(ctwin::live::steps_every_rank_holds(first, 1, f.disk.path, 1, false, &refused) == std::vector<std::int64_t>{4});
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].rfind("step 8 is not restorable: " + shard.string() + ": buffer ", 0) == 0);
  CHECK(refused[0].find("fails its checksum") != std::string::npos);
}

TEST_CASE("flash checkpoint: a step some ranks never wrote goes once a newer step is complete", "[live][flash]") {
  // World 2, keep 3. A step older than the newest complete one that is not complete itself never
  // will be (each rank persists in step order): its folder goes whole, every rank's files in it.
  Fixture f;
  Ranks buffers(2);
  std::vector<std::unique_ptr<Engine>> engines;
  EngineOptions options = f.options(false);
  options.keep_last = 3;
  buffers.attach(engines, options);
  const auto save = [&](std::size_t r, std::int64_t step) {
    for (std::size_t i = 0; i < buffers.ranks[r].buffers.size(); ++i) fill_pattern(buffers.ranks[r].buffers[i], step, i + 16 * r);
    engines[r]->save(step);
    REQUIRE(engines[r]->wait_persisted(step, 30));  // persisted in this thread, then pruned
  };
  const std::vector<std::string> kept{"step-000000000001", "step-000000000003", "step-000000000004"};
  SECTION("rank 1 died before persisting step 2: it goes at the first prune after step 3 is complete") {
    save(0, 1), save(1, 1), save(0, 2);
    save(0, 3);  // step 3 is not complete yet: step 2 may still be wanted
    CHECK(f.step_folders() == std::vector<std::string>{"step-000000000001", "step-000000000002", "step-000000000003"});
    save(1, 3);  // rank 1's prune removes rank 0's shard of step 2 too
    CHECK(f.step_folders() == std::vector<std::string>{"step-000000000001", "step-000000000003"});
    save(0, 4), save(1, 4);
    CHECK(f.step_folders() == kept);  // the complete step 1 stays among the three kept
  }
  SECTION("rank 1 wrote steps 1-4 and never persists again (its node left): rank 0's prune takes its step 2") {
    save(1, 1), save(0, 1);
    for (std::int64_t step = 2; step <= 4; ++step) save(1, step);
    CHECK(f.step_folders().size() == 4);
    save(0, 3), save(0, 4);  // rank 0 died in its save of step 2 and went on from 3
    CHECK(f.step_folders() == kept);
  }
}
