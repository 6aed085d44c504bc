#pragma once
//! The trainer as a child process: its own process group, a datagram socket for its heartbeat lines
//! at the path in $CTWIN_HEARTBEAT_SOCKET (it survives launchers that close inherited descriptors
//! and start workers in new sessions, as torchrun does), and an exec failure reported to the parent
//! rather than read as a crash. This process is a child subreaper, so that every process the
//! trainer started, in whatever session, is killed and reaped with it (kill_tree).

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "live/supervisor/orphan_guard.hpp"

namespace ctwin::live {

class TrainerProcess {
 public:
  //! Starts `argv` with `env` added. Throws std::invalid_argument when it cannot be executed.
  //! `capture_output`: its stdout and stderr come through this process (read_output_lines), which
  //! passes them on to its own. `orphan_grace_s`: should this process die first, what is left of the
  //! trainer's tree that long after is killed (orphan_guard.hpp).
  TrainerProcess(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                 bool capture_output = false, double orphan_grace_s = 60);
  ~TrainerProcess();  //!< kills what is left of the group
  TrainerProcess(const TrainerProcess&) = delete;
  TrainerProcess& operator=(const TrainerProcess&) = delete;

  pid_t pid() const { return pid_; }
  int heartbeat_fd() const { return read_fd_; }  //!< readable when a message waits
  const std::string& heartbeat_socket() const { return socket_path_; }
  //! This attempt's folder, where its workers record their own failures ($CTWIN_FAULT_DIR).
  const std::string& fault_dir() const { return socket_dir_; }
  //! Complete lines received since the last call.
  std::vector<std::string> read_lines();
  //! With `capture_output`: the output's lines since the last call (split at '\n' and at '\r', which
  //! progress bars redraw with), after passing the bytes on to this process's stdout and stderr.
  std::vector<std::string> read_output_lines();
  //! The captured output's descriptors (-1 when not captured), for poll().
  int stdout_fd() const { return output_[0].fd; }
  int stderr_fd() const { return output_[1].fd; }
  //! The exit status once it has exited (code, or 128 + signal), without blocking.
  std::optional<int> poll_exit();
  bool running() const { return !status_; }
  void signal(int sig) const;
  //! Sends `first` (SIGTERM: a chance to save), waits `grace_s`, then SIGKILL. Returns the status.
  int stop(int first, double grace_s);
  //! SIGKILLs the trainer's group and every process below this one, and reaps them: no worker of
  //! an old attempt survives it, whichever session it moved to.
  void kill_tree();
  //! "exit 1", "signal 6 (Aborted)".
  static std::string describe(int status);

 private:
  void remove_socket();
  pid_t pid_ = -1;
  int read_fd_ = -1;
  std::string socket_dir_, socket_path_;
  struct Output {
    int fd = -1;
    std::string partial;
  } output_[2];
  std::optional<int> status_;
  std::unique_ptr<OrphanGuard> guard_;
};

}  // namespace ctwin::live
