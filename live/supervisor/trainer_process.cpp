#include "live/supervisor/trainer_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "live/supervisor/worker_failures.hpp"

namespace ctwin::live {

namespace {

//! The trainers alive in this process: what is below another one is not this one's to kill.
std::mutex g_trainers_mutex;
std::set<pid_t> g_trainers;

//! Every process below `root`, by walking /proc, except what is below another trainer of ours:
//! what a launcher's workers in their own sessions (torchrun's start_new_session) leave outside
//! the trainer's process group, and orphans of its tree (this process is their subreaper).
std::vector<pid_t> descendants_of(pid_t root, pid_t own_trainer) {
  std::map<pid_t, pid_t> parent;
  if (DIR* proc = ::opendir("/proc")) {
    while (const dirent* e = ::readdir(proc)) {
      const pid_t pid = static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10));
      if (pid <= 0) continue;
      std::ifstream stat("/proc/" + std::string(e->d_name) + "/stat");
      std::string text;
      std::getline(stat, text);
      const auto close = text.rfind(')');  // the command may hold spaces and parentheses
      if (close == std::string::npos) continue;
      char state = 0;
      int ppid = 0;
      if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) == 2) parent[pid] = ppid;
    }
    ::closedir(proc);
  }
  std::set<pid_t> others;
  {
    std::lock_guard lock(g_trainers_mutex);
    others = g_trainers;
  }
  others.erase(own_trainer);
  std::vector<pid_t> out;
  for (const auto& [pid, ppid] : parent) {
    if (others.count(pid) || OrphanGuard::is_guard(pid)) continue;
    for (pid_t up = ppid, hops = 0; up > 1 && hops < 4096; ++hops) {
      if (others.count(up)) break;  // another attempt's tree
      if (up == root) {
        out.push_back(pid);
        break;
      }
      const auto it = parent.find(up);
      if (it == parent.end()) break;
      up = it->second;
    }
  }
  return out;
}

}  // namespace

TrainerProcess::TrainerProcess(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                               bool capture_output, double orphan_grace_s) {
  if (argv.empty()) throw std::invalid_argument("no trainer command");
  // Orphans of the trainer's tree (a launcher's workers whose parent died) become this process's
  // children, not init's, so that kill_tree() finds and reaps them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The heartbeat channel: a datagram socket at a path in the environment, which survives a
  // launcher that closes inherited descriptors and starts its workers in new sessions (torchrun).
  char folder[] = "/tmp/ctwin-beat-XXXXXX";
  if (!::mkdtemp(folder)) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  socket_dir_ = folder;
  socket_path_ = socket_dir_ + "/heartbeat";
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path_.c_str());
  read_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (read_fd_ < 0 || ::bind(read_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    const std::string why = std::strerror(errno);
    remove_socket();
    throw std::runtime_error("heartbeat socket " + socket_path_ + ": " + why);
  }
  int exec_error[2], out[2] = {-1, -1}, err[2] = {-1, -1};
  if (::pipe2(exec_error, O_CLOEXEC) != 0 || (capture_output && (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)))
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t supervisor = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    // The trainer follows its supervisor: an agent killed outright (SIGKILL, the OOM killer) must not
    // leave a rank training on its own, holding the GPU and the collective, while the master replaces
    // the node. SIGTERM lets a launcher (torchrun) stop its workers; what is left after the stop
    // grace, the guard kills (orphan_guard.hpp). Safe here: the supervisor forks
    // from its main thread, which lives as long as it does (the signal follows the forking thread).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != supervisor) ::_exit(128 + SIGTERM);  // it died before the line above
    if (capture_output) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
    }
    ::setenv("CTWIN_HEARTBEAT_SOCKET", socket_path_.c_str(), 1);
    // Where the workers record their own failures (worker_failures.hpp), torchrun's error file too.
    ::setenv("CTWIN_FAULT_DIR", socket_dir_.c_str(), 1);
    ::setenv("TORCHELASTIC_ERROR_FILE", (socket_dir_ + "/" + kTorchErrorFile).c_str(), 0);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    ::unsetenv("CTWIN_JOB_TOKEN");  // the job's secret is the agent's: a trainer (and what it runs) never sees it
    ::signal(SIGPIPE, SIG_DFL);
    ::execvp(args[0], args.data());
    const int e = errno;
    [[maybe_unused]] auto n = ::write(exec_error[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(exec_error[1]);
  if (capture_output) {
    ::close(out[1]);
    ::close(err[1]);
    output_[0].fd = out[0];
    output_[1].fd = err[0];
    for (const auto& o : output_) ::fcntl(o.fd, F_SETFL, ::fcntl(o.fd, F_GETFL) | O_NONBLOCK);
  }
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  ::setpgid(pid_, pid_);  // also here: no race with an early signal to the group
  int e = 0;
  const bool failed = ::read(exec_error[0], &e, sizeof e) == sizeof e;
  ::close(exec_error[0]);
  if (failed) {
    ::waitpid(pid_, nullptr, 0);
    status_ = 127;
    remove_socket();
    throw std::invalid_argument(argv[0] + ": cannot run the trainer: " + std::strerror(e));
  }
  {
    std::lock_guard lock(g_trainers_mutex);
    g_trainers.insert(pid_);
  }
  guard_ = std::make_unique<OrphanGuard>("CTWIN_HEARTBEAT_SOCKET=" + socket_path_, socket_dir_, orphan_grace_s);
}

TrainerProcess::~TrainerProcess() {
  if (pid_ > 0) kill_tree();
  guard_.reset();
  remove_socket();
  for (auto& o : output_)
    if (o.fd >= 0) ::close(o.fd);
  std::lock_guard lock(g_trainers_mutex);
  g_trainers.erase(pid_);
}

std::vector<std::string> TrainerProcess::read_output_lines() {
  std::vector<std::string> lines;
  char buffer[8192];
  for (int which = 0; which < 2; ++which) {
    Output& o = output_[which];
    if (o.fd < 0) continue;
    for (;;) {
      const ssize_t n = ::read(o.fd, buffer, sizeof buffer);
      if (n <= 0) break;
      for (ssize_t done = 0; done < n;) {  // passed on as it came: the operator still sees the trainer
        const ssize_t w = ::write(which == 0 ? 1 : 2, buffer + done, static_cast<std::size_t>(n - done));
        if (w <= 0) break;
        done += w;
      }
      o.partial.append(buffer, static_cast<std::size_t>(n));
    }
    std::size_t start = 0;
    for (std::size_t i = 0; i < o.partial.size(); ++i)
      if (o.partial[i] == '\n' || o.partial[i] == '\r') {
        if (i > start) lines.push_back(o.partial.substr(start, i - start));
        start = i + 1;
      }
    o.partial.erase(0, start);
    if (o.partial.size() > 65536) o.partial.clear();  // no step line is this long
  }
  return lines;
}

void TrainerProcess::remove_socket() {
  if (read_fd_ >= 0) ::close(read_fd_);
  read_fd_ = -1;
  std::error_code ignored;
  if (!socket_dir_.empty()) std::filesystem::remove_all(socket_dir_, ignored);  // the socket, the workers' records
  socket_path_.clear();
  socket_dir_.clear();
}

void TrainerProcess::kill_tree() {
  if (!status_) ::kill(-pid_, SIGKILL);
  // Whatever left the group (new sessions) is still below this process: kill it all, reap what
  // became ours, and look again until nothing is left (a dying launcher may still fork).
  for (int round = 0; round < 50; ++round) {
    const std::vector<pid_t> left = descendants_of(::getpid(), pid_);
    bool any = false;
    for (const pid_t pid : left) {
      if (pid == pid_ && status_) continue;
      ::kill(pid, SIGKILL);
      any = true;
    }
    for (const pid_t pid : left) {
      if (pid == pid_) {
        if (!status_) {
          int status = 0;
          if (::waitpid(pid_, &status, 0) == pid_) status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        continue;
      }
      ::waitpid(pid, nullptr, WNOHANG);  // one of ours now (subreaper); not ours: nothing happens
    }
    if (!any) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::vector<std::string> TrainerProcess::read_lines() {
  std::vector<std::string> lines;
  char buffer[4096];
  for (;;) {  // each datagram is one or more whole lines, from any of the trainer's processes
    const ssize_t n = ::recv(read_fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) break;
    std::string datagram(buffer, static_cast<std::size_t>(n));
    for (std::size_t at = 0; at < datagram.size();) {
      std::size_t end = datagram.find('\n', at);
      if (end == std::string::npos) end = datagram.size();
      if (end > at) lines.push_back(datagram.substr(at, end - at));
      at = end + 1;
    }
  }
  return lines;
}

std::optional<int> TrainerProcess::poll_exit() {
  if (status_) return status_;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  kill_tree();  // the trainer's own children and its launcher's workers, if it left any
  return status_;
}

void TrainerProcess::signal(int sig) const {
  if (status_) return;
  ::kill(-pid_, sig);
  for (const pid_t pid : descendants_of(::getpid(), pid_))  // workers in sessions of their own too
    if (::getpgid(pid) != pid_) ::kill(pid, sig);
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
