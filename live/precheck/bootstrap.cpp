#include "live/precheck/bootstrap.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/ranks.hpp"

namespace ctwin::live {

namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  int rank() const override { return Ranks::world().rank(); }
  int size() const override { return Ranks::world().size(); }
  std::vector<std::vector<unsigned char>> allgather(const std::vector<unsigned char>& mine) override {
    return Ranks::world().allgather_bytes(mine);
  }
};

using Clock = std::chrono::steady_clock;

//! Sends or receives exactly `n` bytes, waiting for the peer no longer than `patience_s` in all
//! (a rank stuck in a driver call must not hold the others for ever). Non-blocking calls only.
void io(int fd, void* data, std::size_t n, bool sending, double patience_s, int peer) {
  const auto deadline = std::isfinite(patience_s)
                            ? Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(patience_s))
                            : Clock::time_point::max();
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    const auto left_ms = deadline == Clock::time_point::max()
                             ? 1000LL
                             : std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left_ms <= 0)
      throw BootstrapTimeout("rank " + std::to_string(peer) + " of this check did not answer within " +
                             std::to_string(static_cast<long long>(patience_s)) + " s");
    pollfd pfd{fd, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
    if (::poll(&pfd, 1, static_cast<int>(std::min<long long>(left_ms, 1000))) <= 0) continue;
    const ssize_t k = sending ? ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : ::recv(fd, p, n, MSG_DONTWAIT);
    if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (k <= 0) throw std::runtime_error("rank " + std::to_string(peer) + " of this check went away");
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void send_blob(int fd, const std::vector<unsigned char>& blob, double patience_s, int peer) {
  std::uint64_t n = blob.size();
  io(fd, &n, sizeof n, true, patience_s, peer);
  io(fd, const_cast<unsigned char*>(blob.data()), blob.size(), true, patience_s, peer);
}

std::vector<unsigned char> receive_blob(int fd, double patience_s, int peer) {
  std::uint64_t n = 0;
  io(fd, &n, sizeof n, false, patience_s, peer);
  if (n > (std::uint64_t(1) << 30)) throw std::runtime_error("rank " + std::to_string(peer) + " sent a message of " + std::to_string(n) + " bytes");
  std::vector<unsigned char> blob(n);
  io(fd, blob.data(), n, false, patience_s, peer);
  return blob;
}

}  // namespace

std::unique_ptr<Bootstrap> mpi_bootstrap() { return std::make_unique<MpiBootstrap>(); }

std::unique_ptr<LocalBootstrap> LocalBootstrap::fork_ranks(int size) {
  std::unique_ptr<LocalBootstrap> root(new LocalBootstrap(0, size));
  std::fflush(nullptr);  // nothing buffered is written twice
  for (int r = 1; r < size; ++r) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
      throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      for (const int fd : root->links_) ::close(fd);
      root->links_.clear();
      root->children_.clear();  // its siblings are rank 0's to wait for, not this child's
      ::close(pair[0]);
      std::unique_ptr<LocalBootstrap> child(new LocalBootstrap(r, size));
      child->links_ = {pair[1]};
      return child;
    }
    ::close(pair[1]);
    root->links_.push_back(pair[0]);
    root->children_.push_back(pid);
  }
  return root;
}

LocalBootstrap::~LocalBootstrap() {
  for (const int fd : links_) ::close(fd);
  // Rank 0 leaving without finish() (an error): a child that still runs is stuck; it goes too.
  for (const pid_t pid : children_) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

std::vector<std::vector<unsigned char>> LocalBootstrap::allgather(const std::vector<unsigned char>& mine) {
  if (rank_ != 0) {
    send_blob(links_[0], mine, patience_s_, 0);
    std::vector<std::vector<unsigned char>> all;
    for (int r = 0; r < size_; ++r) all.push_back(receive_blob(links_[0], patience_s_, 0));
    return all;
  }
  std::vector<std::vector<unsigned char>> all{mine};
  for (std::size_t i = 0; i < links_.size(); ++i) all.push_back(receive_blob(links_[i], patience_s_, static_cast<int>(i) + 1));
  for (std::size_t i = 0; i < links_.size(); ++i)
    for (const auto& blob : all) send_blob(links_[i], blob, patience_s_, static_cast<int>(i) + 1);
  return all;
}

bool LocalBootstrap::finish(int code) {
  if (rank_ != 0) {
    std::fflush(nullptr);
    ::_exit(code);
  }
  bool all_fine = true;
  for (const pid_t pid : children_) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    all_fine &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  children_.clear();
  return all_fine;
}

}  // namespace ctwin::live
