#include "sim/simgrid/subprocess.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ctwin {

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("write to pipe failed: ") + std::strerror(errno));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

void write_all(int fd, const std::string& bytes) { write_all(fd, bytes.data(), bytes.size()); }

std::string read_all(int fd) {
  std::string out;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error(std::string("read from pipe failed: ") + std::strerror(errno));
    if (n == 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

Child start_child(const std::function<void(int fd)>& body, const char* what, bool own_thread) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // the child must not flush the parent's buffered output a second time
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    int status = 0;
    auto run = [&] {
      try {
        body(fds[1]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ctwin: %s failed: %s\n", what, e.what());
        status = 1;
      }
    };
    // On a thread of its own the body's allocations come from a fresh malloc arena: on the main
    // thread they would reuse the parent's free heap chunks, each page a copy-on-write fault (half
    // of a cold transfer simulation on a VM, where a fault also flushes the TLB).
    if (own_thread) std::thread(run).join();
    else run();
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(status);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

std::string finish_child(const Child& child, const char* what) {
  std::string answer;
  std::string failure;
  try {
    answer = read_all(child.fd);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  ::close(child.fd);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.empty()) throw std::runtime_error(std::string(what) + ": " + failure);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string(what) + ": simulation process failed (" +
                             (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                  : "exit " + std::to_string(WEXITSTATUS(status))) +
                             ")");
  return answer;
}

}  // namespace ctwin
