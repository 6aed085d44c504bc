// A trainer that only checkpoints: restores what it finds, then saves step after step with
// buffers whose content proves the step (and the rank), printing "saved <step>" once every rank's
// save of that step has returned. With WORLD 2, the two ranks are two engines in this process that
// save in turn, so a SIGKILL can fall between rank 0's save and rank 1's: a rank that "died before
// saving". FSIZE_LIMIT (bytes, optional) makes every larger write fail: a failing disk.
// The crash-consistency test kills it with SIGKILL at random moments.
//   flash_writer SHM_DIR PERSIST_DIR NAME [WORLD [FSIZE_LIMIT]]

#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "live/checkpoint/flash_engine.hpp"
#include "live/flash_pattern.hpp"

namespace {

struct Rank {
  std::unique_ptr<ctwin::flash::Engine> engine;
  std::vector<std::vector<unsigned char>> buffers;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6) {
    std::fprintf(stderr, "usage: flash_writer SHM_DIR PERSIST_DIR NAME [WORLD [FSIZE_LIMIT]]\n");
    return 2;
  }
  const int world = argc > 4 ? std::atoi(argv[4]) : 1;
  if (argc > 5) {
    ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG, as on a full disk
    rlimit limit{};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    limit.rlim_cur = std::strtoull(argv[5], nullptr, 10);
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  std::vector<Rank> ranks(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) {
    ctwin::flash::EngineOptions options;
    options.shm_dir = argv[1];
    options.persist_dir = argv[2];
    options.name = argv[3];
    options.rank = r;
    options.world = world;
    options.keep_last = 2;
    auto& rank = ranks[static_cast<std::size_t>(r)];
    rank.engine = std::make_unique<ctwin::flash::Engine>(options);
    for (const auto size : ctwin::test::crash_test_sizes()) rank.buffers.emplace_back(size);
    for (std::size_t i = 0; i < rank.buffers.size(); ++i)
      rank.engine->register_buffer("buffer." + std::to_string(i), rank.buffers[i].data(), rank.buffers[i].size());
  }
  std::int64_t restored = -2;
  for (auto& rank : ranks) {
    const std::int64_t step = rank.engine->restore().step;
    if (restored != -2 && step != restored) {
      std::fprintf(stderr, "flash_writer: ranks restored steps %lld and %lld\n", static_cast<long long>(restored),
                   static_cast<long long>(step));
      return 3;
    }
    restored = step;
  }
  for (std::int64_t step = restored + 1; step < restored + 100000; ++step) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      for (std::size_t i = 0; i < ranks[r].buffers.size(); ++i)
        ctwin::test::fill_pattern(ranks[r].buffers[i], step, i + 16 * r);
      ranks[r].engine->save(step);
    }
    std::printf("saved %lld\n", static_cast<long long>(step));
    std::fflush(stdout);
  }
  return 0;
}
