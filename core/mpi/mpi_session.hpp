#pragma once
//! Starts MPI for the life of `main` when the process was launched by mpirun (and ctwin was built
//! with MPI), and joins this process to its ranks (core/ranks.hpp); otherwise does nothing, so a
//! plain run never pays MPI's start-up. The only code of ctwin that includes <mpi.h>.

namespace ctwin {

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
