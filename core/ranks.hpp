#pragma once
//! Trials spread over processes: OpenMPI ranks when ctwin runs under `mpirun`, else this process
//! alone. Each rank runs a contiguous slice of the trial indices (trial i always draws from
//! trial_seed(seed, i)) and every rank gathers every result in trial order, so the outcome, and the
//! decisions taken from it (adaptive replications), are those of a one-process run.
//!
//! This library knows no MPI: the exchange goes through a RankTransport that core/mpi/ (the
//! ctwin_mpi library, linked by the binaries only) installs when MPI started.

#include <vector>

namespace ctwin {

//! How ranks exchange data: MPI's collectives, or anything that gives the same answers.
class RankTransport {
 public:
  virtual ~RankTransport() = default;
  //! Every rank's doubles (counts[k] from rank k, placed at offsets[k]), on every rank.
  virtual std::vector<double> allgatherv(const std::vector<double>& mine, const std::vector<int>& counts,
                                         const std::vector<int>& offsets, int total) const = 0;
  //! Every rank's bytes (any length), in rank order, on every rank.
  virtual std::vector<std::vector<unsigned char>> allgather_bytes(const std::vector<unsigned char>& mine) const = 0;
};

class Ranks {
 public:
  struct Slice {
    int first = 0;
    int count = 0;
  };
  //! The processes of this run; {0, 1} unless a transport joined it to others (MpiSession).
  static const Ranks& world();
  //! Makes this process rank `rank` of `size`, exchanging through `transport` (which outlives it).
  static void join_world(int rank, int size, const RankTransport* transport);

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  Slice slice(int trials) const;
  //! Every rank's slice of per-trial values, in trial order, on every rank.
  std::vector<double> gather(const std::vector<double>& local, int trials) const;
  //! Every rank's bytes (any length), in rank order, on every rank.
  std::vector<std::vector<unsigned char>> allgather_bytes(const std::vector<unsigned char>& mine) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  const RankTransport* transport_ = nullptr;
};

}  // namespace ctwin
