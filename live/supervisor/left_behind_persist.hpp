#pragma once
//! A trainer killed between its save and the persist leaves its newest snapshot only in shared
//! memory: the supervisor persists it, so that it survives this node. In the background: the
//! relaunched trainer restores from the same memory meanwhile (both only read the slot), and a slow
//! disk stays off the recovery's critical path. Its outcome is logged when it is done.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ctwin::live {

class LeftBehindPersist {
 public:
  struct Outcome {
    bool failed = false;
    std::string line;  //!< "persisted step=S rank=R", or why it failed
  };
  LeftBehindPersist() = default;
  ~LeftBehindPersist();
  LeftBehindPersist(const LeftBehindPersist&) = delete;
  LeftBehindPersist& operator=(const LeftBehindPersist&) = delete;

  //! Persists the newest snapshot of ranks [first, first + ranks) of a job of `world` ranks, unless
  //! disk has it already. Call `take(true)` first: one persist at a time.
  void start(const std::string& shm_dir, const std::string& name, const std::string& persist_dir, int first, int ranks, int world,
             bool replicated);
  //! The last persist's outcome once it is done (with `wait`: waits for it); empty while it runs.
  std::vector<Outcome> take(bool wait);
  //! A persist started and not taken yet.
  bool running() const { return thread_.joinable(); }

 private:
  std::thread thread_;
  std::mutex mutex_;
  std::atomic<bool> done_{false};
  std::vector<Outcome> outcome_;
};

}  // namespace ctwin::live
