#pragma once
//! How the ranks of a live command find each other and exchange small messages (NCCL ids, group
//! assignments, timings): MPI when launched by `mpirun` / `srun` (nccl-tests does the same), or
//! processes this command forks on one machine (tests, and a node checking its own GPUs).

#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace ctwin::live {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  //! Every rank's bytes, in rank order, on every rank. Every rank must call it, in the same order.
  virtual std::vector<std::vector<unsigned char>> allgather(const std::vector<unsigned char>& mine) = 0;
  //! How long one allgather may wait for a rank before BootstrapTimeout; MPI's collectives cannot
  //! be bounded, so there the launcher's own time limit (srun --time) is the bound.
  virtual void set_patience(double seconds) { (void)seconds; }
};

//! A rank did not take part in an allgather within the patience given.
class BootstrapTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//! The MPI ranks of this run (one rank when not under mpirun).
std::unique_ptr<Bootstrap> mpi_bootstrap();

//! Forks `size - 1` children; returns in every process with its rank (this process is rank 0).
//! A child must end with `finish()`; rank 0's `finish()` waits for the children and returns false
//! when one of them failed.
class LocalBootstrap final : public Bootstrap {
 public:
  static std::unique_ptr<LocalBootstrap> fork_ranks(int size);
  ~LocalBootstrap() override;
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::vector<unsigned char>> allgather(const std::vector<unsigned char>& mine) override;
  void set_patience(double seconds) override { patience_s_ = seconds; }
  //! Children: exit the process with `code`. Rank 0: wait for the children.
  bool finish(int code);

 private:
  LocalBootstrap(int rank, int size) : rank_(rank), size_(size) {}
  int rank_, size_;
  std::vector<int> links_;   //!< rank 0: one socket per child; a child: its socket to rank 0
  std::vector<int> children_;
  double patience_s_ = std::numeric_limits<double>::infinity();
};

}  // namespace ctwin::live
