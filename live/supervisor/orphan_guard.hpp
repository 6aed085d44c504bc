#pragma once
//! What a supervisor killed outright (SIGKILL, the OOM killer) leaves behind must not train on.
//! The trainer gets SIGTERM with its parent's death (PR_SET_PDEATHSIG), but a launcher's workers
//! in sessions of their own get nothing, and a launcher may take long to close them: torch 1.13's
//! torchrun waits 30 s for its workers, and a second signal during that wait makes it start a
//! second 30 s close. A node the master replaced would keep a rank in the job's collectives.
//!
//! The guard is a small process forked beside each trainer. It waits on a pipe whose only writer
//! is the supervisor: a byte means "released" (the trainer's tree was ended here); end of file
//! without one means the supervisor died. It then gives the trainer's tree the stop grace to end
//! on its own, and SIGKILLs whatever is left: every process whose environment holds the trainer's
//! heartbeat socket path (unique to the attempt; torchrun passes the environment on), wherever it
//! was reparented. Fork without exec from a threaded process: the guard's side makes only
//! async-signal-safe calls, on buffers made before the fork.

#include <sys/types.h>

#include <string>

namespace ctwin::live {

class OrphanGuard {
 public:
  //! Guards the processes whose environment holds `marker` (NAME=value); `grace_s` after the
  //! supervisor's death they are killed. `socket_dir`: removed then (nobody else will).
  OrphanGuard(const std::string& marker, const std::string& socket_dir, double grace_s);
  ~OrphanGuard();  //!< releases the guard: the supervisor ends the tree itself
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;

  pid_t pid() const { return pid_; }
  //! Whether `pid` is a guard of this process (the trainer's tree walk and its signals skip it).
  static bool is_guard(pid_t pid);

 private:
  pid_t pid_ = -1;
  int release_fd_ = -1;
};

}  // namespace ctwin::live
