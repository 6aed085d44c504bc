#pragma once
//! The flash checkpoint tests' fixture: a folder of slots in /dev/shm, a persist folder, and
//! buffers of the crash tests' sizes filled with a step's pattern (flash_pattern.hpp).

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "live/checkpoint/flash_engine.hpp"
#include "live/flash_pattern.hpp"

namespace ctwin::test {

//! A fresh folder in /dev/shm (for slots) or the temporary folder (for the disk), removed at the end.
struct TempDir {
  explicit TempDir(const std::string& parent) {
    std::string pattern = parent + "/ctwin-test-XXXXXX";
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string path;
};

//! The names in `dir`, sorted.
inline std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Fixture {
  TempDir shm{"/dev/shm"}, disk{std::filesystem::temp_directory_path().string()};
  std::vector<std::vector<unsigned char>> buffers;
  Fixture() {
    for (const auto size : crash_test_sizes()) buffers.emplace_back(size);
  }
  flash::EngineOptions options(bool background = true) const {
    flash::EngineOptions o;
    o.name = "job";
    o.shm_dir = shm.path;
    o.persist_dir = disk.path;
    o.keep_last = 2;
    o.persist_in_background = background;
    return o;
  }
  void attach(flash::Engine& engine) {
    for (std::size_t i = 0; i < buffers.size(); ++i)
      engine.register_buffer("buffer." + std::to_string(i), buffers[i].data(), buffers[i].size());
  }
  void fill(std::int64_t step) {
    for (std::size_t i = 0; i < buffers.size(); ++i) ctwin::test::fill_pattern(buffers[i], step, i);
  }
  bool holds(std::int64_t step) const {
    for (std::size_t i = 0; i < buffers.size(); ++i)
      if (!ctwin::test::holds_pattern(buffers[i], step, i)) return false;
    return true;
  }
  void scramble() {
    for (auto& b : buffers) std::fill(b.begin(), b.end(), 0xee);
  }
  std::vector<std::string> step_folders() const { return names_in(disk.path); }
};

//! The buffers of `world` ranks (rank r's buffer i carries pattern index i + 16 r, as the writer's).
struct Ranks {
  std::vector<Fixture> ranks;
  explicit Ranks(int world) : ranks(static_cast<std::size_t>(world)) {}
  void attach(std::vector<std::unique_ptr<flash::Engine>>& engines, flash::EngineOptions o) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      o.rank = static_cast<int>(r);
      o.world = static_cast<int>(ranks.size());
      engines.push_back(std::make_unique<flash::Engine>(o));
      for (std::size_t i = 0; i < ranks[r].buffers.size(); ++i)
        engines.back()->register_buffer("buffer." + std::to_string(i), ranks[r].buffers[i].data(), ranks[r].buffers[i].size());
      ranks[r].scramble();
    }
  }
  bool hold(std::int64_t step) const {
    for (std::size_t r = 0; r < ranks.size(); ++r)
      for (std::size_t i = 0; i < ranks[r].buffers.size(); ++i)
        if (!holds_pattern(ranks[r].buffers[i], step, i + 16 * r)) return false;
    return true;
  }
};

}  // namespace ctwin::test
