#include "live/supervisor/orphan_guard.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

namespace ctwin::live {

namespace {

std::mutex g_guards_mutex;
std::set<pid_t> g_guards;

//! Everything the guard needs, made before the fork: after it, no allocation.
struct GuardPlan {
  const char* needle;  //!< "\0NAME=value\0": a whole variable of an environment block
  std::size_t needle_size;
  const char* socket_path;
  const char* socket_dir;
  double grace_s;
  char* buffer;
  std::size_t buffer_size;
  char* entries;
  std::size_t entries_size;
};

struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

void sleep_s(double s) {
  timespec t{static_cast<time_t>(s), static_cast<long>((s - static_cast<double>(static_cast<time_t>(s))) * 1e9)};
  while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

//! Whether /proc/<pid>/environ holds the needle, read in chunks that overlap by the needle's size.
bool environ_holds(const char* pid_text, const GuardPlan& p) {
  char path[64] = "/proc/";
  std::size_t at = 6;
  for (const char* c = pid_text; *c && at < sizeof path - 10; ++c) path[at++] = *c;
  std::memcpy(path + at, "/environ", 9);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone, or not ours to read
  p.buffer[0] = '\0';        // the block's first variable follows a "\0" too
  std::size_t kept = 1;
  bool found = false;
  for (;;) {
    const ssize_t n = ::read(fd, p.buffer + kept, p.buffer_size - kept);
    if (n <= 0) break;
    const std::size_t size = kept + static_cast<std::size_t>(n);
    if (::memmem(p.buffer, size, p.needle, p.needle_size)) {
      found = true;
      break;
    }
    kept = std::min(size, p.needle_size - 1);
    std::memmove(p.buffer, p.buffer + size - kept, kept);
  }
  ::close(fd);
  return found;
}

//! The processes that hold the needle (a zombie's environment reads empty); `sig` != 0 is sent to each.
int marked_processes(const GuardPlan& p, int sig) {
  const int proc = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (proc < 0) return 0;
  int found = 0;
  for (;;) {
    const long n = ::syscall(SYS_getdents64, proc, p.entries, p.entries_size);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      const auto* e = reinterpret_cast<const LinuxDirent64*>(p.entries + off);
      off += e->d_reclen;
      pid_t pid = 0;
      const char* c = e->d_name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != '\0' || pid <= 0 || pid == ::getpid() || !environ_holds(e->d_name, p)) continue;
      ++found;
      if (sig) ::kill(pid, sig);
    }
  }
  ::close(proc);
  return found;
}

void say(const char* text) { [[maybe_unused]] auto n = ::write(2, text, std::strlen(text)); }

[[noreturn]] void guard(int release_fd, const GuardPlan& p) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (const int s : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE}) ::sigaction(s, &ignore, nullptr);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);  // out of the supervisor's group: a signal to it is not one to the guard
  // Nothing of the supervisor's held open: another guard's release pipe kept here would never end.
  for (int fd = 0; fd < 1024; ++fd)
    if (fd != release_fd && fd != 2) ::close(fd);
  ::syscall(SYS_close_range, 1024u, ~0u, 0u);
  char byte = 0;
  ssize_t n;
  do n = ::read(release_fd, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n == 1) ::_exit(0);  // released: the supervisor ended the tree itself
  // The supervisor is gone. The trainer had its SIGTERM (PR_SET_PDEATHSIG); nothing more is sent
  // during the grace: a launcher's close must not be interrupted into a second one.
  for (double waited = 0; waited < p.grace_s && marked_processes(p, 0) > 0; waited += 0.1) sleep_s(0.1);
  if (marked_processes(p, 0) > 0) say("ctwin: the supervisor died: its trainer's processes left after the stop grace are killed\n");
  for (int round = 0; round < 100 && marked_processes(p, SIGKILL) > 0; ++round) sleep_s(0.02);
  ::unlink(p.socket_path);
  ::rmdir(p.socket_dir);
  ::_exit(0);
}

}  // namespace

OrphanGuard::OrphanGuard(const std::string& marker, const std::string& socket_dir, double grace_s) {
  std::string needle = std::string(1, '\0') + marker + std::string(1, '\0');
  const std::string socket_path = socket_dir + "/heartbeat";
  std::vector<char> buffer(std::max<std::size_t>(65536, needle.size() * 2)), entries(32768);
  const GuardPlan plan{needle.data(), needle.size(), socket_path.c_str(), socket_dir.c_str(), grace_s,
                       buffer.data(),  buffer.size(), entries.data(),     entries.size()};
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no guard: the trainer's death signal alone
  std::lock_guard lock(g_guards_mutex);      // registered before any tree walk can see it
  pid_ = ::fork();
  if (pid_ == 0) guard(fds[0], plan);
  ::close(fds[0]);
  if (pid_ < 0) {
    ::close(fds[1]);
    return;
  }
  release_fd_ = fds[1];
  g_guards.insert(pid_);
}

OrphanGuard::~OrphanGuard() {
  if (pid_ <= 0) return;
  const char byte = 1;
  [[maybe_unused]] auto n = ::write(release_fd_, &byte, 1);
  ::close(release_fd_);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  std::lock_guard lock(g_guards_mutex);
  g_guards.erase(pid_);
}

bool OrphanGuard::is_guard(pid_t pid) {
  std::lock_guard lock(g_guards_mutex);
  return g_guards.count(pid) > 0;
}

}  // namespace ctwin::live
