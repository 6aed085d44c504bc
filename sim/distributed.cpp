#include "sim/distributed.hpp"

#include <cstdlib>
#include <stdexcept>

#ifdef CTWIN_HAVE_MPI
#include <mpi.h>
#endif

namespace ctwin {

namespace {
Ranks& mutable_world() {
  static Ranks ranks;
  return ranks;
}

//! Set by OpenMPI's launcher (and by PMI-based ones): a plain run leaves MPI alone.
bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}
}  // namespace

const Ranks& Ranks::world() { return mutable_world(); }

Ranks::Slice Ranks::slice(int trials) const {
  const auto lo = static_cast<long long>(trials) * rank_ / size_;
  const auto hi = static_cast<long long>(trials) * (rank_ + 1) / size_;
  return {static_cast<int>(lo), static_cast<int>(hi - lo)};
}

std::vector<double> Ranks::gather(const std::vector<double>& local, int trials) const {
  if (size_ == 1) return local;
#ifdef CTWIN_HAVE_MPI
  std::vector<int> counts(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  Ranks r = *this;
  for (int k = 0; k < size_; ++k) {
    r.rank_ = k;
    const Slice s = r.slice(trials);
    counts[static_cast<std::size_t>(k)] = s.count;
    displs[static_cast<std::size_t>(k)] = s.first;
  }
  if (static_cast<int>(local.size()) != counts[static_cast<std::size_t>(rank_)])
    throw std::logic_error("Ranks::gather: this rank's slice has the wrong size");
  std::vector<double> all(static_cast<std::size_t>(trials));
  MPI_Allgatherv(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, MPI_COMM_WORLD);
  return all;
#else
  throw std::logic_error("Ranks::gather: more than one rank without MPI");
#endif
}

std::vector<std::vector<unsigned char>> Ranks::allgather_bytes(const std::vector<unsigned char>& mine) const {
  if (size_ == 1) return {mine};
#ifdef CTWIN_HAVE_MPI
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_)), displs(static_cast<std::size_t>(size_));
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int k = 0; k < size_; ++k) {
    displs[static_cast<std::size_t>(k)] = total;
    total += lengths[static_cast<std::size_t>(k)];
  }
  std::vector<unsigned char> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD);
  std::vector<std::vector<unsigned char>> out;
  for (int k = 0; k < size_; ++k)
    out.emplace_back(all.begin() + displs[static_cast<std::size_t>(k)],
                     all.begin() + displs[static_cast<std::size_t>(k)] + lengths[static_cast<std::size_t>(k)]);
  return out;
#else
  throw std::logic_error("Ranks::allgather_bytes: more than one rank without MPI");
#endif
}

MpiSession::MpiSession(int& argc, char**& argv) {
#ifdef CTWIN_HAVE_MPI
  if (!launched_by_mpirun()) return;
  MPI_Init(&argc, &argv);
  started_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &mutable_world().rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &mutable_world().size_);
#else
  (void)argc;
  (void)argv;
#endif
}

MpiSession::~MpiSession() {
#ifdef CTWIN_HAVE_MPI
  if (started_) MPI_Finalize();
#endif
}

bool MpiSession::built_with_mpi() {
#ifdef CTWIN_HAVE_MPI
  return true;
#else
  return false;
#endif
}

}  // namespace ctwin
