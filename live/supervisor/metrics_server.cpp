#include "live/supervisor/metrics_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace ctwin::live {

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point deadline) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms > 0 ? static_cast<int>(ms) : 0;
}

}  // namespace

MetricsServer::MetricsServer(const std::string& host, int port, double request_deadline_s) : deadline_s_(request_deadline_s) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1)
    throw std::runtime_error("metrics address " + host + ": not an IPv4 address");
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int yes = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || ::listen(fd_, 16) != 0 ||
      ::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    const std::string why = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("metrics on " + host + ":" + std::to_string(port) + ": " + why);
  }
  socklen_t length = sizeof address;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { serve_loop(); });
}

MetricsServer::~MetricsServer() {
  stopping_ = true;
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_[1], &byte, 1);
  if (thread_.joinable()) thread_.join();
  for (const int fd : {fd_, wake_[0], wake_[1]})
    if (fd >= 0) ::close(fd);
}

void MetricsServer::publish(std::string text) {
  std::lock_guard lock(mutex_);
  text_ = std::move(text);
}

void MetricsServer::serve_loop() {
  while (!stopping_) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, 1000) <= 0 || stopping_) continue;
    for (int client; (client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0 && !stopping_;) {
      serve_one(client);
      ::close(client);
    }
  }
}

void MetricsServer::serve_one(int client) {
  // One deadline for the whole exchange: a client that trickles its request, or reads its answer
  // slowly, is dropped when it runs out, whatever each byte's pace.
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadline_s_));
  std::string request;
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) != 1) {
      if (Clock::now() >= deadline) return void(++dropped_);
      continue;
    }
    char buffer[2048];
    const ssize_t n = ::recv(client, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) break;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  std::string response;
  if (request.rfind("GET /metrics", 0) == 0) {
    std::string text;
    {
      std::lock_guard lock(mutex_);
      text = text_;
    }
    response = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " + std::to_string(text.size()) +
               "\r\nConnection: close\r\n\r\n" + text;
  } else {
    response = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
  }
  for (std::size_t sent = 0; sent < response.size();) {
    pollfd p{client, POLLOUT, 0};
    if (::poll(&p, 1, ms_left(deadline)) != 1) return void(++dropped_);
    const ssize_t n = ::send(client, response.data() + sent, response.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
  ++answered_;
}

}  // namespace ctwin::live
