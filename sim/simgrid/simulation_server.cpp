#include "sim/simgrid/simulation_server.hpp"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "sim/simgrid/platform.hpp"
#include "sim/simgrid/subprocess.hpp"

namespace ctwin {
namespace {

//! send() without SIGPIPE: a server gone while the caller writes is an answer, not a signal.
bool send_all(int fd, const std::string& bytes) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

bool receive_exactly(int fd, char* data, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<std::size_t>(n);
  }
  return true;
}

//! A message: its length, then its bytes; a reply starts with a status (0: the answer follows).
bool send_message(int fd, std::int32_t status, const std::string& bytes, bool with_status) {
  std::string framed;
  if (with_status) framed.append(reinterpret_cast<const char*>(&status), sizeof status);
  const std::uint64_t size = bytes.size();
  framed.append(reinterpret_cast<const char*>(&size), sizeof size);
  framed += bytes;
  return send_all(fd, framed);
}

bool receive_message(int fd, std::string& bytes) {
  std::uint64_t size = 0;
  if (!receive_exactly(fd, reinterpret_cast<char*>(&size), sizeof size) || size > (1ULL << 30)) return false;
  bytes.resize(size);
  return receive_exactly(fd, bytes.data(), size);
}

//! One question: a child of the server runs the handler (on the server's thread, which holds the
//! engine); its answer, or why it failed.
std::pair<std::int32_t, std::string> answer_in_child(SimulationServer::Handler handler, const std::string& request) {
  try {
    return {0, run_in_child([&](int fd) { write_all(fd, handler(request)); }, "simulation", false)};
  } catch (const std::exception& e) {
    return {1, e.what()};
  }
}

[[noreturn]] void serve(int socket, SimulationServer::Handler handler, bool many_actors) {
  // Only the socket and the standard streams stay open: another thread's pipe held here would
  // never see its end while the server lives.
  if (socket != 3) {
    ::dup2(socket, 3);
    ::close(socket);
    socket = 3;
  }
  ::close_range(4, ~0U, 0);
  // A thread of its own: a fresh malloc arena (subprocess.cpp), and the engine's maestro on it,
  // which every child forked from it keeps.
  std::thread([&] {
    try {
      init_simgrid_engine(many_actors);
    } catch (const std::exception&) {
      return;  // the callers fork children of their own
    }
    std::string request;
    while (receive_message(socket, request)) {
      const auto [status, reply] = answer_in_child(handler, request);
      if (!send_message(socket, status, reply, true)) return;
    }
  }).join();
  std::fflush(nullptr);
  ::_exit(0);
}

}  // namespace

std::unique_ptr<SimulationServer> SimulationServer::start(Handler handler, bool many_actors) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return nullptr;
  std::fflush(nullptr);  // the server must not flush the caller's buffered output a second time
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    return nullptr;
  }
  if (pid == 0) {
    ::close(fds[0]);
    serve(fds[1], handler, many_actors);
  }
  ::close(fds[1]);
  return std::unique_ptr<SimulationServer>(new SimulationServer(pid, fds[0]));
}

SimulationServer::~SimulationServer() {
  ::close(socket_);  // the server reads its end and leaves
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

std::optional<std::string> SimulationServer::ask(const std::string& request) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock || gone_) return std::nullopt;
  std::int32_t status = 0;
  std::string reply;
  if (!send_message(socket_, 0, request, false) || !receive_exactly(socket_, reinterpret_cast<char*>(&status), sizeof status) ||
      !receive_message(socket_, reply)) {
    gone_ = true;
    return std::nullopt;
  }
  if (status != 0) throw std::runtime_error("checkpoint transfer on the fabric: " + reply);
  return reply;
}

}  // namespace ctwin
