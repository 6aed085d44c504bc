#pragma once
//! The master's board through which a precheck group's GPUs hand each other small blobs (the
//! collective's id): the members of an exchange post their own blob under its key and ask again
//! until every member's is there. No MPI and no second service: the master is already reachable
//! from every node. Bounded: keys expire, and the board holds at most so many.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ctwin::live::cluster {

class ExchangeBoard {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMostKeys = 100'000;
  static constexpr std::chrono::minutes kKept{10};

  //! Posts `rank`'s blob (again: the same one) of an exchange among `size`; every member's once all
  //! are in. A member that posts a different size or blob than before is refused (std::invalid_argument).
  std::optional<std::vector<std::string>> post(const std::string& key, int rank, int size, const std::string& blob, Clock::time_point now);
  std::size_t keys() const { return board_.size(); }

 private:
  struct Exchange {
    int size = 0;
    std::vector<std::optional<std::string>> blobs;
    Clock::time_point created;
  };
  void forget_old(Clock::time_point now);
  std::map<std::string, Exchange> board_;
  Clock::time_point swept_{};
};

}  // namespace ctwin::live::cluster
