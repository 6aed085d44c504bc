// The flash checkpoint engine killed outright (SIGKILL) at random points, over and over, by a real
// writer process (tests/live/flash_writer.cpp): nothing acknowledged is ever lost, nothing torn comes
// back, and the ranks always agree, with and without a failing disk.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "live/checkpoint/flash_engine.hpp"
#include "live/flash_fixture.hpp"
#include "live/flash_pattern.hpp"

namespace fs = std::filesystem;
using namespace ctwin::flash;
using ctwin::test::Fixture;
using ctwin::test::Ranks;
using ctwin::test::TempDir;
using ctwin::test::holds_pattern;

namespace {

//! Runs the writer, kills it with SIGKILL after `lines` saves and `delay_us` more; returns the last
//! step whose save had returned on every rank (-1: none).
std::int64_t run_and_kill(const std::string& shm, const std::string& disk, int world, const std::string& fsize_limit,
                          int lines, int delay_us) {
  int out[2];
  REQUIRE(::pipe(out) == 0);
  const std::string world_text = std::to_string(world);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    ::close(out[1]);
    ::execl(CTWIN_FLASH_WRITER, CTWIN_FLASH_WRITER, shm.c_str(), disk.c_str(), "job", world_text.c_str(),
            fsize_limit.empty() ? static_cast<char*>(nullptr) : fsize_limit.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char chunk[4096];
  int seen = 0;
  while (seen < lines) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) break;
    const ssize_t n = ::read(out[0], chunk, sizeof chunk);
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
    seen = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
  ::usleep(static_cast<useconds_t>(delay_us));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 3));  // the writer's own ranks disagreed
  for (ssize_t n; (n = ::read(out[0], chunk, sizeof chunk)) > 0;) text.append(chunk, static_cast<std::size_t>(n));
  ::close(out[0]);
  std::int64_t last = -1;
  std::istringstream in(text);
  std::string word;
  long long step = 0;
  while (in >> word >> step)
    if (word == "saved") last = step;
  return last;
}

//! Every rank restores, all the same step: returns it (the test fails when they disagree).
std::int64_t restore_all(Ranks& buffers, const EngineOptions& o, bool expect_no_skips) {
  std::vector<std::unique_ptr<Engine>> engines;
  buffers.attach(engines, o);
  std::int64_t step = -2;
  for (auto& engine : engines) {
    const auto r = engine->restore();
    if (step != -2) REQUIRE(r.step == step);  // no two ranks resume from different steps
    step = r.step;
    for (const auto& why : r.skipped) UNSCOPED_INFO("skipped " << why);
    if (expect_no_skips) REQUIRE(r.skipped.empty());  // no torn shard was ever published
  }
  return step;
}

//! SIGKILLs the writer at random points, `rounds` times; every `failing_disk_every`-th round its
//! disk fails (every write over 64 KiB). Nothing acknowledged is lost, nothing torn comes back, and
//! the ranks always agree.
void kill_writer_repeatedly(int rounds, int world, int failing_disk_every) {
  REQUIRE(fs::exists(CTWIN_FLASH_WRITER));
  Fixture f;
  TempDir empty_shm("/dev/shm");
  Ranks buffers(world);
  std::mt19937 rng(20261121 + static_cast<unsigned>(world));
  std::int64_t acked = -1;
  int from_disk = 0, failing_rounds = 0;
  for (int round = 0; round < rounds; ++round) {
    const bool failing = failing_disk_every > 0 && round % failing_disk_every == failing_disk_every - 1;
    failing_rounds += failing;
    const std::int64_t last = run_and_kill(f.shm.path, f.disk.path, world, failing ? "65536" : "",
                                           static_cast<int>(rng() % 4), static_cast<int>(rng() % 4000));
    acked = std::max(acked, last);
    INFO("round " << round << (failing ? " (failing disk)" : "") << ": acknowledged " << acked);
    const std::int64_t restored = restore_all(buffers, f.options(false), false);
    INFO("restored " << restored);
    REQUIRE(restored >= acked);  // nothing acknowledged is ever lost
    if (restored >= 0) REQUIRE(buffers.hold(restored));  // and what comes back is whole
    // The disk alone (the node lost its memory): the newest whole checkpoint there, or none.
    EngineOptions disk_only = f.options(false);
    disk_only.shm_dir = empty_shm.path;
    const std::int64_t d = restore_all(buffers, disk_only, true);
    if (d >= 0) {
      ++from_disk;
      INFO("disk step " << d);
      REQUIRE(buffers.hold(d));
    }
    for (const auto& e : fs::directory_iterator(empty_shm.path)) fs::remove(e.path());
  }
  CHECK(acked > rounds / 2);
  CHECK(from_disk > rounds / 2);
  CHECK(failing_rounds == (failing_disk_every > 0 ? rounds / failing_disk_every : 0));
}

}  // namespace

TEST_CASE("flash checkpoint: SIGKILL at random points never loses an acknowledged save nor tears one", "[live][flash][process]") {
  kill_writer_repeatedly(200, 1, 0);
}

TEST_CASE("flash checkpoint: SIGKILL of two ranks, a failing disk every third round: the ranks agree", "[live][flash][process]") {
  kill_writer_repeatedly(150, 2, 3);
}

TEST_CASE("flash checkpoint: SIGKILL crash consistency, 2,000 rounds", "[live][flash][slow][process]") {
  kill_writer_repeatedly(2000, 1, 0);
}

TEST_CASE("flash checkpoint: SIGKILL crash consistency, two ranks and a failing disk, 1,000 rounds", "[live][flash][slow][process]") {
  kill_writer_repeatedly(1000, 2, 3);
}
