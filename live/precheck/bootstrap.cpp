#include "live/precheck/bootstrap.hpp"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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

void io(int fd, void* data, std::size_t n, bool sending) {
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    const ssize_t k = sending ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw std::runtime_error("a rank of this check went away");
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

void send_blob(int fd, const std::vector<unsigned char>& blob) {
  std::uint64_t n = blob.size();
  io(fd, &n, sizeof n, true);
  io(fd, const_cast<unsigned char*>(blob.data()), blob.size(), true);
}

std::vector<unsigned char> receive_blob(int fd) {
  std::uint64_t n = 0;
  io(fd, &n, sizeof n, false);
  std::vector<unsigned char> blob(n);
  io(fd, blob.data(), n, false);
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
}

std::vector<std::vector<unsigned char>> LocalBootstrap::allgather(const std::vector<unsigned char>& mine) {
  if (rank_ != 0) {
    send_blob(links_[0], mine);
    std::vector<std::vector<unsigned char>> all;
    for (int r = 0; r < size_; ++r) all.push_back(receive_blob(links_[0]));
    return all;
  }
  std::vector<std::vector<unsigned char>> all{mine};
  for (const int fd : links_) all.push_back(receive_blob(fd));
  for (const int fd : links_)
    for (const auto& blob : all) send_blob(fd, blob);
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
