#include "live/supervisor/left_behind_persist.hpp"

#include <cstdint>
#include <exception>

#include "live/checkpoint/disk_store.hpp"
#include "live/checkpoint/flash_engine.hpp"

namespace ctwin::live {

LeftBehindPersist::~LeftBehindPersist() {
  if (thread_.joinable()) thread_.join();
}

void LeftBehindPersist::start(const std::string& shm_dir, const std::string& name, const std::string& persist_dir, int first, int ranks,
                              int world, bool replicated) {
  done_ = false;
  thread_ = std::thread([=, this] {
    std::vector<Outcome> said;
    for (int rank = first; rank < first + ranks; ++rank) {
      try {
        flash::DiskStore store(persist_dir, rank, world, 2, replicated);
        const auto steps = store.complete_steps();
        const std::int64_t after = steps.empty() ? -1 : steps.front();
        if (const auto step = flash::Engine::persist_newest({shm_dir, name, rank}, store, after))
          said.push_back({false, "persisted step=" + std::to_string(*step) + " rank=" + std::to_string(rank)});
      } catch (const std::exception& e) {
        said.push_back({true, std::string("persist after the crash failed: ") + e.what()});
      }
    }
    std::lock_guard lock(mutex_);
    outcome_ = std::move(said);
    done_ = true;
  });
}

std::vector<LeftBehindPersist::Outcome> LeftBehindPersist::take(bool wait) {
  if (!thread_.joinable() || (!wait && !done_)) return {};
  thread_.join();
  std::lock_guard lock(mutex_);
  return std::move(outcome_);
}

}  // namespace ctwin::live
