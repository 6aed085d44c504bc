// A trainer that only checkpoints: restores what it finds, then saves step after step with
// buffers whose content proves the step, printing "saved <step>" once each save has returned.
// The crash-consistency test kills it with SIGKILL at random moments.
//   flash_writer SHM_DIR PERSIST_DIR NAME

#include <cstdio>
#include <vector>

#include "live/checkpoint/flash_engine.hpp"
#include "live/flash_pattern.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: flash_writer SHM_DIR PERSIST_DIR NAME\n");
    return 2;
  }
  ctwin::flash::EngineOptions options;
  options.shm_dir = argv[1];
  options.persist_dir = argv[2];
  options.name = argv[3];
  options.keep_last = 2;
  ctwin::flash::Engine engine(options);
  std::vector<std::vector<unsigned char>> buffers;
  for (const auto size : ctwin::test::crash_test_sizes()) buffers.emplace_back(size);
  for (std::size_t i = 0; i < buffers.size(); ++i)
    engine.register_buffer("buffer." + std::to_string(i), buffers[i].data(), buffers[i].size());
  const std::int64_t restored = engine.restore().step;
  for (std::int64_t step = restored + 1; step < restored + 100000; ++step) {
    for (std::size_t i = 0; i < buffers.size(); ++i) ctwin::test::fill_pattern(buffers[i], step, i);
    engine.save(step);
    std::printf("saved %lld\n", static_cast<long long>(step));
    std::fflush(stdout);
  }
  return 0;
}
