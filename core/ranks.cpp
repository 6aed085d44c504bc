#include "core/ranks.hpp"

#include <stdexcept>
#include <string>

namespace ctwin {

namespace {
Ranks& mutable_world() {
  static Ranks ranks;
  return ranks;
}
}  // namespace

const Ranks& Ranks::world() { return mutable_world(); }

void Ranks::join_world(int rank, int size, const RankTransport* transport) {
  if (size < 1 || rank < 0 || rank >= size || (size > 1 && !transport))
    throw std::logic_error("Ranks::join_world: rank " + std::to_string(rank) + " of " + std::to_string(size));
  Ranks& world = mutable_world();
  world.rank_ = rank;
  world.size_ = size;
  world.transport_ = transport;
}

Ranks::Slice Ranks::slice(int trials) const {
  const auto lo = static_cast<long long>(trials) * rank_ / size_;
  const auto hi = static_cast<long long>(trials) * (rank_ + 1) / size_;
  return {static_cast<int>(lo), static_cast<int>(hi - lo)};
}

std::vector<double> Ranks::gather(const std::vector<double>& local, int trials) const {
  if (size_ == 1) return local;
  std::vector<int> counts(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
  Ranks r = *this;
  for (int k = 0; k < size_; ++k) {
    r.rank_ = k;
    const Slice s = r.slice(trials);
    counts[static_cast<std::size_t>(k)] = s.count;
    offsets[static_cast<std::size_t>(k)] = s.first;
  }
  if (static_cast<int>(local.size()) != counts[static_cast<std::size_t>(rank_)])
    throw std::logic_error("Ranks::gather: this rank's slice has the wrong size");
  return transport_->allgatherv(local, counts, offsets, trials);
}

std::vector<std::vector<unsigned char>> Ranks::allgather_bytes(const std::vector<unsigned char>& mine) const {
  if (size_ == 1) return {mine};
  return transport_->allgather_bytes(mine);
}

}  // namespace ctwin
