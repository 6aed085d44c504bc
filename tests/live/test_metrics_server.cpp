// The metrics endpoint on its own thread: a client that trickles its request a byte every 150 ms
// (which once held the supervisor's loop for 16 s) is dropped at its whole-request deadline, and
// neither publishing nor another scraper waits on it.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "live/supervisor/metrics_server.hpp"

using ctwin::live::MetricsServer;
using Clock = std::chrono::steady_clock;

namespace {

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

std::string get(int port, const std::string& path) {
  const int fd = connect_to(port);
  const std::string request = "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  return answer;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

TEST_CASE("metrics server: a client that trickles its request delays neither publishing nor other scrapers", "[live][supervisor]") {
  MetricsServer server("127.0.0.1", 0, 1.0);
  server.publish("ctwin_step 7\n");
  // The slow client: a byte every 150 ms, for 12 s, never finishing its request.
  std::atomic<bool> stop{false};
  std::thread slow([&] {
    const int fd = connect_to(server.port());
    for (int i = 0; i < 80 && !stop; ++i) {
      if (::send(fd, "G", 1, MSG_NOSIGNAL) != 1) break;  // dropped: the server closed it
      std::this_thread::sleep_for(std::chrono::milliseconds(150));
    }
    ::close(fd);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it is being served now
  const auto t0 = Clock::now();
  for (int i = 0; i < 100; ++i) server.publish("ctwin_step " + std::to_string(8 + i) + "\n");
  CHECK(seconds_since(t0) < 1.0);  // a mutex and a string: never the client's pace
  const auto t1 = Clock::now();
  const std::string answer = get(server.port(), "/metrics");
  const double waited = seconds_since(t1);
  stop = true;
  slow.join();
  CHECK(answer.find("200 OK") != std::string::npos);
  CHECK(answer.find("ctwin_step 107") != std::string::npos);
  // Served after the slow client's 1 s deadline, long before its 12 s of trickling end.
  CHECK(waited < 6.0);
  CHECK(server.dropped() >= 1);
  CHECK(get(server.port(), "/other").find("404") != std::string::npos);
}
