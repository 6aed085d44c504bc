#pragma once
//! Trials spread over processes: OpenMPI ranks when ctwin runs under `mpirun`, else this process
//! alone. Each rank runs a contiguous slice of the trial indices (trial i always draws from
//! trial_seed(seed, i)) and every rank gathers every result in trial order, so the outcome, and the
//! decisions taken from it (adaptive replications), are those of a one-process run.

#include <vector>

namespace ctwin {

class Ranks {
 public:
  struct Slice {
    int first = 0;
    int count = 0;
  };
  //! The processes of this run; {0, 1} unless an MpiSession started MPI.
  static const Ranks& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  Slice slice(int trials) const;
  //! Every rank's slice of per-trial values, in trial order, on every rank.
  std::vector<double> gather(const std::vector<double>& local, int trials) const;
  //! Every rank's bytes (any length), in rank order, on every rank.
  std::vector<std::vector<unsigned char>> allgather_bytes(const std::vector<unsigned char>& mine) const;

 private:
  friend class MpiSession;
  int rank_ = 0;
  int size_ = 1;
};

//! Starts MPI for the life of `main` when the process was launched by mpirun (and ctwin was built
//! with MPI); otherwise does nothing, so a plain run never pays MPI's start-up.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  static bool built_with_mpi();

 private:
  bool started_ = false;
};

}  // namespace ctwin
