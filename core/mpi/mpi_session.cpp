#include "core/mpi/mpi_session.hpp"

#include <cstdlib>

#include "core/ranks.hpp"

#ifdef CTWIN_HAVE_MPI
#include <mpi.h>
#endif

namespace ctwin {

namespace {

//! Set by OpenMPI's launcher (and by PMI-based ones): a plain run leaves MPI alone.
[[maybe_unused]] bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

#ifdef CTWIN_HAVE_MPI
class MpiTransport final : public RankTransport {
 public:
  std::vector<double> allgatherv(const std::vector<double>& mine, const std::vector<int>& counts,
                                 const std::vector<int>& offsets, int total) const override {
    std::vector<double> all(static_cast<std::size_t>(total));
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                   MPI_DOUBLE, MPI_COMM_WORLD);
    return all;
  }

  std::vector<std::vector<unsigned char>> allgather_bytes(const std::vector<unsigned char>& mine) const override {
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int k = 0; k < size; ++k) {
      displs[static_cast<std::size_t>(k)] = total;
      total += lengths[static_cast<std::size_t>(k)];
    }
    std::vector<unsigned char> all(static_cast<std::size_t>(total));
    MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::vector<unsigned char>> out;
    for (int k = 0; k < size; ++k)
      out.emplace_back(all.begin() + displs[static_cast<std::size_t>(k)],
                       all.begin() + displs[static_cast<std::size_t>(k)] + lengths[static_cast<std::size_t>(k)]);
    return out;
  }
};
#endif

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
#ifdef CTWIN_HAVE_MPI
  if (!launched_by_mpirun()) return;
  MPI_Init(&argc, &argv);
  started_ = true;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const MpiTransport transport;
  Ranks::join_world(rank, size, &transport);
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
