#include "live/backend/cpu_device.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <Eigen/Dense>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>
#include <utility>

#include "core/wall_clock.hpp"

namespace ctwin::live {

namespace {

using Clock = std::chrono::steady_clock;

//! The slowdown of a slow device, as time slept after the real work.
void stretch(double worked_s, double slowdown) {
  if (slowdown > 1) std::this_thread::sleep_for(std::chrono::duration<double>(worked_s * (slowdown - 1)));
}

Eigen::MatrixXf deterministic_matrix(int n, unsigned seed) {
  Eigen::MatrixXf m(n, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      unsigned h = static_cast<unsigned>(i + j * n) * 2654435761u ^ seed;
      h ^= h >> 15;
      h *= 2246822519u;
      h ^= h >> 13;
      m(i, j) = static_cast<float>(h & 0xffff) / 32768.0f - 1.0f;
    }
  return m;
}

//! Sends or receives exactly `n` bytes before `deadline`, else throws CollectiveTimeout. Every call
//! is non-blocking (MSG_DONTWAIT): a blocking send() of 64 MiB to a hung peer whose buffers are full
//! would wait for ever, past any deadline.
void transfer(int fd, void* data, std::size_t n, bool sending, Clock::time_point deadline) {
  auto* p = static_cast<unsigned char*>(data);
  while (n > 0) {
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left_ms <= 0) throw CollectiveTimeout("all-reduce timed out");
    pollfd pfd{fd, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
    if (::poll(&pfd, 1, static_cast<int>(std::min<long long>(left_ms, 1000))) <= 0) continue;
    const ssize_t k = sending ? ::send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : ::recv(fd, p, n, MSG_DONTWAIT);
    if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (k <= 0) throw CollectiveTimeout(std::string("all-reduce peer went away: ") + (k < 0 ? std::strerror(errno) : "closed"));
    p += k;
    n -= static_cast<std::size_t>(k);
  }
}

constexpr int kTokenChars = 32;

struct Socket {
  int fd = -1;
  explicit Socket(int f) : fd(f) {}
  Socket(Socket&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

//! A secret a peer shows the leader: 128 bits from the system's random device, in hex.
std::string random_token() {
  std::random_device device;
  std::string token;
  static const char* hex = "0123456789abcdef";
  for (int i = 0; i < kTokenChars / 8; ++i) {
    const std::uint32_t word = device();
    for (int k = 0; k < 8; ++k) token += hex[(word >> (4 * k)) & 0xf];
  }
  return token;
}

//! This host's address as the other hosts reach it (its name resolved), else loopback.
std::string own_address() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  std::string address = "127.0.0.1";
  if (::getaddrinfo(host, nullptr, &hints, &found) == 0 && found) {
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, text, sizeof text);
    address = text;
    ::freeaddrinfo(found);
  }
  return address;
}

}  // namespace

CpuDevice::~CpuDevice() {
  for (const auto& [port, fd] : listening_) ::close(fd);
}

DeviceInfo CpuDevice::info() {
  DeviceInfo d;
  d.name = "CPU (Eigen fp32)";
  d.bus_id = "cpu" + std::to_string(index_);
  d.index = index_;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib) {
    if (key == "MemTotal:") d.memory_total_bytes = kib * 1024;
    meminfo.ignore(64, '\n');
  }
  // A CPU "device" has no memory of its own to be taken by another job: what is reported in use is
  // the injected figure.
  d.memory_used_bytes = static_cast<std::uint64_t>(faults_.memory_in_use * static_cast<double>(d.memory_total_bytes));
  return d;
}

double CpuDevice::gemm_flops(int n, int iterations) {
  const Eigen::MatrixXf a = deterministic_matrix(n, 1), b = deterministic_matrix(n, 2);
  Eigen::MatrixXf c(n, n);
  c.noalias() = a * b;  // warm-up
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) c.noalias() = a * b;
  const double worked = seconds_since(t0);
  stretch(worked, faults_.slowdown);
  return 2.0 * n * double(n) * n * iterations / seconds_since(t0);
}

GemmCheck CpuDevice::gemm_check(int n) {
  const Eigen::MatrixXf a = deterministic_matrix(n, 3), b = deterministic_matrix(n, 4);
  Eigen::MatrixXf c = a * b;
  if (faults_.corrupt) {  // what a bad tensor core or a flipped bit looks like
    c(n / 2, n / 3) += 1.0f;
    c(1, 2) = std::nanf("");
  }
  // Reference: double precision, with the sum of |products| bounding fp32's rounding.
  const Eigen::MatrixXd reference = a.cast<double>() * b.cast<double>();
  const Eigen::MatrixXd magnitude = a.cast<double>().cwiseAbs() * b.cast<double>().cwiseAbs();
  GemmCheck check;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      if (!std::isfinite(c(i, j))) ++check.non_finite;
      else if (std::abs(c(i, j) - reference(i, j)) > 1e-5 * magnitude(i, j) + 1e-6) ++check.mismatches;
    }
  return check;
}

double CpuDevice::memory_copy_bandwidth(std::size_t bytes, int iterations) {
  std::vector<unsigned char> from(bytes, 1), to(bytes, 0);
  std::memcpy(to.data(), from.data(), bytes);  // warm-up: pages mapped
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) std::memcpy(to.data(), from.data(), bytes);
  const double worked = seconds_since(t0);
  stretch(worked, faults_.slowdown);
  return double(bytes) * iterations / seconds_since(t0);
}

std::pair<double, double> CpuDevice::host_link_bandwidth(std::size_t bytes, int iterations) {
  // No link between host and device on a CPU: a memcpy each way stands in for it.
  const double rate = memory_copy_bandwidth(bytes, iterations);
  return {rate, rate};
}

//! The id is "address:port:token". The leader listens on the address it advertises only (never
//! every interface), and a peer proves it was given the id by sending the token first: a stray
//! connection to the port cannot join the sum.
std::vector<unsigned char> CpuDevice::make_comm_id() {
  const std::string address = own_address();
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof addr;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1 || fd < 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int e = errno;
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot listen for the all-reduce on " + address + ": " + std::strerror(e));
  }
  const int port = ntohs(addr.sin_port);
  listening_[port] = fd;
  const std::string text = address + ":" + std::to_string(port) + ":" + random_token();
  std::vector<unsigned char> id(128, 0);
  std::memcpy(id.data(), text.data(), std::min<std::size_t>(text.size(), 127));
  return id;
}

double CpuDevice::allreduce_seconds(const std::vector<unsigned char>& id, int nranks, int rank, std::size_t bytes,
                                    int iterations, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  if (faults_.hang) {  // a hung collective: silent until everyone gives up
    std::this_thread::sleep_until(deadline);
    throw CollectiveTimeout("all-reduce hung (injected)");
  }
  const std::string whole(reinterpret_cast<const char*>(id.data()), ::strnlen(reinterpret_cast<const char*>(id.data()), id.size()));
  const auto last = whole.rfind(':');
  const auto colon = last == std::string::npos || last == 0 ? std::string::npos : whole.rfind(':', last - 1);
  if (colon == std::string::npos || whole.size() - last - 1 != kTokenChars)
    throw std::runtime_error("malformed all-reduce id (address:port:token expected)");
  const std::string text = whole.substr(0, last), token = whole.substr(last + 1);  // the token is never printed
  const int port = std::stoi(text.substr(colon + 1));
  const std::size_t count = bytes / sizeof(float);
  std::vector<float> data(count, 1.0f + rank), incoming(rank == 0 ? count : 0);

  std::vector<Socket> peers;
  if (rank == 0) {  // the leader made the id: accept the others
    const auto it = listening_.find(port);
    if (it == listening_.end()) throw std::runtime_error("all-reduce id " + text + " was not made here");
    Socket listener(it->second);
    listening_.erase(it);
    while (static_cast<int>(peers.size()) < nranks - 1) {
      const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd pfd{listener.fd, POLLIN, 0};
      if (left_ms <= 0) throw CollectiveTimeout("all-reduce timed out waiting for " + std::to_string(nranks - 1 - peers.size()) + " peer(s)");
      if (::poll(&pfd, 1, static_cast<int>(std::min<long long>(left_ms, 1000))) <= 0) continue;
      Socket peer(::accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
      if (peer.fd < 0) continue;
      // The token first, within a few seconds: a connection that does not show it is dropped.
      std::string shown(kTokenChars, '\0');
      try {
        transfer(peer.fd, shown.data(), shown.size(), false, std::min(deadline, Clock::now() + std::chrono::seconds(5)));
      } catch (const CollectiveTimeout&) {
        continue;
      }
      if (shown == token) peers.push_back(std::move(peer));
    }
  } else {
    addrinfo hints{}, *found = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (::getaddrinfo(text.substr(0, colon).c_str(), text.substr(colon + 1).c_str(), &hints, &found) != 0 || !found)
      throw std::runtime_error("cannot resolve the all-reduce leader " + text);
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    while (::connect(s.fd, found->ai_addr, found->ai_addrlen) != 0) {
      if (Clock::now() > deadline) {
        ::freeaddrinfo(found);
        throw CollectiveTimeout("cannot reach the all-reduce leader " + text);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::freeaddrinfo(found);
    std::string shown = token;
    transfer(s.fd, shown.data(), shown.size(), true, deadline);
    peers.push_back(std::move(s));
  }
  for (auto& p : peers) {
    const int one = 1;
    ::setsockopt(p.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  auto once = [&] {
    if (rank == 0) {
      for (auto& p : peers) {
        transfer(p.fd, incoming.data(), count * sizeof(float), false, deadline);
        for (std::size_t i = 0; i < count; ++i) data[i] += incoming[i];
      }
      for (auto& p : peers) transfer(p.fd, data.data(), count * sizeof(float), true, deadline);
    } else {
      transfer(peers[0].fd, data.data(), count * sizeof(float), true, deadline);
      transfer(peers[0].fd, data.data(), count * sizeof(float), false, deadline);
    }
  };
  once();  // warm-up: connections and buffers
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) once();
  const double worked = seconds_since(t0);
  stretch(worked, faults_.slowdown);
  return seconds_since(t0) / iterations;
}

}  // namespace ctwin::live
