#include "live/supervisor/trainer_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace ctwin::live {

TrainerProcess::TrainerProcess(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env) {
  if (argv.empty()) throw std::invalid_argument("no trainer command");
  int beat[2], exec_error[2];
  if (::pipe2(beat, O_CLOEXEC) != 0 || ::pipe2(exec_error, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    const int fd = ::dup(beat[1]);  // without O_CLOEXEC: the trainer keeps it
    ::setenv("CTWIN_HEARTBEAT_FD", std::to_string(fd).c_str(), 1);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] auto n = ::write(exec_error[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(beat[1]);
  ::close(exec_error[1]);
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  ::setpgid(pid_, pid_);  // also here: no race with an early signal to the group
  int e = 0;
  const bool failed = ::read(exec_error[0], &e, sizeof e) == sizeof e;
  ::close(exec_error[0]);
  if (failed) {
    ::waitpid(pid_, nullptr, 0);
    ::close(beat[0]);
    throw std::invalid_argument(argv[0] + ": cannot run the trainer: " + std::strerror(e));
  }
  read_fd_ = beat[0];
  ::fcntl(read_fd_, F_SETFL, ::fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
}

TrainerProcess::~TrainerProcess() {
  if (!status_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (read_fd_ >= 0) ::close(read_fd_);
}

std::vector<std::string> TrainerProcess::read_lines() {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n <= 0) break;
    partial_.append(buffer, static_cast<std::size_t>(n));
  }
  std::vector<std::string> lines;
  for (std::size_t at; (at = partial_.find('\n')) != std::string::npos;) {
    lines.push_back(partial_.substr(0, at));
    partial_.erase(0, at + 1);
  }
  return lines;
}

std::optional<int> TrainerProcess::poll_exit() {
  if (status_) return status_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  ::kill(-pid_, SIGKILL);  // the trainer's own children, if it left any
  return status_;
}

void TrainerProcess::signal(int sig) const {
  if (!status_) ::kill(-pid_, sig);
}

int TrainerProcess::stop(int first, double grace_s) {
  if (status_) return *status_;
  signal(first);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (!poll_exit()) {
    if (first != SIGKILL && std::chrono::steady_clock::now() > deadline) {
      signal(SIGKILL);
      first = SIGKILL;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return *status_;
}

std::string TrainerProcess::describe(int status) {
  if (status > 128) return "signal " + std::to_string(status - 128) + " (" + ::strsignal(status - 128) + ")";
  return "exit " + std::to_string(status);
}

}  // namespace ctwin::live
