#include "live/cluster/exchange_board.hpp"

#include <algorithm>
#include <stdexcept>

namespace ctwin::live::cluster {

std::optional<std::vector<std::string>> ExchangeBoard::post(const std::string& key, int rank, int size, const std::string& blob,
                                                            Clock::time_point now) {
  if (size < 1 || rank < 0 || rank >= size) throw std::invalid_argument("rank " + std::to_string(rank) + " of " + std::to_string(size));
  forget_old(now);
  auto it = board_.find(key);
  if (it == board_.end()) {
    if (board_.size() >= kMostKeys) {  // the oldest exchange makes room
      const auto oldest = std::min_element(board_.begin(), board_.end(),
                                           [](const auto& a, const auto& b) { return a.second.created < b.second.created; });
      board_.erase(oldest);
    }
    it = board_.emplace(key, Exchange{size, std::vector<std::optional<std::string>>(static_cast<std::size_t>(size)), now}).first;
  }
  Exchange& e = it->second;
  if (e.size != size) throw std::invalid_argument("exchange " + key + " has " + std::to_string(e.size) + " members, not " + std::to_string(size));
  auto& mine = e.blobs[static_cast<std::size_t>(rank)];
  if (mine && *mine != blob) throw std::invalid_argument("rank " + std::to_string(rank) + " of exchange " + key + " posted another blob before");
  mine = blob;
  std::vector<std::string> all;
  for (const auto& b : e.blobs) {
    if (!b) return std::nullopt;
    all.push_back(*b);
  }
  return all;
}

void ExchangeBoard::forget_old(Clock::time_point now) {
  if (now - swept_ < std::chrono::seconds(10)) return;
  swept_ = now;
  std::erase_if(board_, [&](const auto& kv) { return now - kv.second.created > kKept; });
}

}  // namespace ctwin::live::cluster
