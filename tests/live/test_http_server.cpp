// The master's HTTP server (live/job/http_server.hpp) against what a real cluster's network
// does without malice: a port scanner or a broken client holding connections open, trickling
// headers, or sending no token. Each case opens real sockets on 127.0.0.1. The last one: an
// agent's heartbeats go on while its report waits on a master that does not answer.

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

#include "live/cluster/agent_link.hpp"
#include "live/cluster/heartbeat_datagram.hpp"
#include "live/job/http_server.hpp"
#include "live/cluster/master_service.hpp"
#include "live/cluster/protocol.hpp"

using namespace ctwin::live;
using namespace ctwin::live::cluster;

namespace {

const std::string kToken = "unit-test-token-0123456789";

HttpServer serve_ok(HttpLimits limits) {
  return HttpServer("127.0.0.1", 0, limits, [](const std::string& a) { return same_secret(a, "Bearer " + kToken); },
                    [](const HttpRequest& r) { return HttpAnswer{200, R"({"target":")" + r.target + "\"}"}; });
}

//! A TCP connection to 127.0.0.1:`port` from the loopback address `from` (-1 when refused).
int connect_to(int port, const char* from = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in source{};
  source.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &source.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) return ::close(fd), -1;
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(static_cast<std::uint16_t>(port));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) return ::close(fd), -1;
  return fd;
}

bool send_text(int fd, const std::string& text) { return ::send(fd, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size()); }

//! Whether the server closed `fd` within `seconds` (what it wrote before is read and returned in `got`).
bool closed_within(int fd, double seconds, std::string* got = nullptr) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < until) {
    pollfd ready{fd, POLLIN, 0};
    if (::poll(&ready, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return true;
    if (got) got->append(buffer, static_cast<std::size_t>(n));
  }
  return false;
}

int authorized_get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(10, 0);
  const auto res = client.Get(path.c_str(), {{"Authorization", "Bearer " + kToken}});
  return res ? res->status : 0;
}

}  // namespace

TEST_CASE("master http: 200 connections trickling headers without a token starve no agent's request", "[live][cluster][network]") {
  HttpServer server = serve_ok({});
  std::vector<int> flood;
  for (int i = 0; i < 200; ++i) {
    const int fd = connect_to(server.port());
    REQUIRE(fd >= 0);
    CHECK(send_text(fd, "GET /v1/status HTTP/1.1\r\nHost: x\r\n"));
    flood.push_back(fd);
  }
  // cpp-httplib's 8 workers were held by 8 such connections: this request waited for good.
  for (int i = 0; i < 5; ++i) CHECK(authorized_get(server.port(), "/v1/status") == 200);
  for (const int fd : flood) ::close(fd);
}

TEST_CASE("master http: headers trickled a line at a time are cut at the header deadline, not per read", "[live][cluster][network]") {
  HttpLimits limits;
  limits.header_deadline_s = 1;
  HttpServer server = serve_ok(limits);
  const int fd = connect_to(server.port());
  REQUIRE(fd >= 0);
  REQUIRE(send_text(fd, "GET /v1/status HTTP/1.1\r\nHost: x\r\n"));
  bool closed = false;
  // A line every 0.2 s keeps any per-read timeout happy for ever; the whole-header deadline is 1 s.
  for (int i = 0; i < 100 && !closed; ++i) {
    closed = !send_text(fd, "X-a: b\r\n") || closed_within(fd, 0.2);
  }
  CHECK(closed);
  // Beast's timer closes the socket before the read's handler counts the timeout: the client can
  // see the close first on a busy machine, so the count is awaited rather than raced.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (server.counts().timed_out == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(server.counts().timed_out >= 1);
  ::close(fd);
}

TEST_CASE("master http: a wrong token is answered 401 before its body is read", "[live][cluster][network]") {
  HttpServer server = serve_ok({});
  const int fd = connect_to(server.port());
  REQUIRE(fd >= 0);
  // A body of 100 MB announced and never sent: the answer comes from the headers alone.
  REQUIRE(send_text(fd, "POST /v1/report HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Length: 100000000\r\n\r\n"));
  std::string got;
  CHECK(closed_within(fd, 20, &got));
  CHECK(got.rfind("HTTP/1.1 401", 0) == 0);
  CHECK(got.find("wrong or missing job token") != std::string::npos);
  CHECK(server.counts().unauthorized == 1);
  ::close(fd);
}

TEST_CASE("master http: at the cap, the address holding the most silent connections loses its oldest first", "[live][cluster][network]") {
  HttpLimits limits;
  limits.max_connections = 8;
  limits.header_deadline_s = 60;
  HttpServer server = serve_ok(limits);
  // Silent connections: a request line, then nothing. Accepted in the order they connected.
  const auto open_silent = [&](const char* from) {
    const int fd = connect_to(server.port(), from);
    REQUIRE(fd >= 0);
    REQUIRE(send_text(fd, "GET / HTTP/1.1\r\n"));
    return fd;
  };
  std::vector<int> scanner, neighbour;
  for (int i = 0; i < 5; ++i) scanner.push_back(open_silent("127.0.0.2"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // past the second each may speak in
  for (int i = 0; i < 2; ++i) neighbour.push_back(open_silent("127.0.0.3"));
  CHECK(server.counts().dropped == 0);  // below the cap, nobody goes
  neighbour.push_back(open_silent("127.0.0.3"));  // the cap: room is made from the scanner
  CHECK(closed_within(scanner[0], 20));
  CHECK(authorized_get(server.port(), "/v1/status") == 200);
  // The agent's connection took the cap again: the scanner's next oldest may have gone too.
  for (const int fd : neighbour) CHECK_FALSE(closed_within(fd, 0.1));
  for (int i = 2; i < 5; ++i) CHECK_FALSE(closed_within(scanner[i], 0.1));
  CHECK(server.counts().dropped >= 1);
  CHECK(server.counts().dropped <= 2);
  for (const int fd : scanner) ::close(fd);
  for (const int fd : neighbour) ::close(fd);
}

TEST_CASE("master http: at the cap, connections that never sent a byte give way first, and a request behind them is served",
          "[live][cluster][network]") {
  HttpLimits limits;
  limits.max_connections = 8;
  limits.header_deadline_s = 60;
  HttpServer server = serve_ok(limits);
  const int speaker = connect_to(server.port(), "127.0.0.2");  // the oldest, and it said something
  REQUIRE(send_text(speaker, "GET / HTTP/1.1\r\n"));
  std::vector<int> idle;  // then 40 that never send a byte (issue 50: 2,000 of them starved every agent)
  for (int i = 0; i < 40; ++i) idle.push_back(connect_to(server.port(), "127.0.0.3"));
  CHECK(authorized_get(server.port(), "/v1/status") == 200);
  CHECK(server.counts().dropped >= 33);  // the idle ones ahead in the kernel's queue went
  CHECK_FALSE(closed_within(speaker, 0.1));  // not the one that spoke, though it is the oldest
  for (const int fd : idle) ::close(fd);
  ::close(speaker);
}

TEST_CASE("master http: at the cap with every connection fresh, a newcomer waits in the kernel's queue and is served", "[live][cluster][network]") {
  HttpLimits limits;
  limits.max_connections = 8;
  limits.header_deadline_s = 60;
  HttpServer server = serve_ok(limits);
  std::vector<int> burst;
  for (int i = 0; i < 8; ++i) {
    burst.push_back(connect_to(server.port(), "127.0.0.2"));
    REQUIRE(send_text(burst.back(), "GET / HTTP/1.1\r\n"));
  }
  // None of the eight has had its second to speak: the server stops accepting rather than
  // refuse; once the oldest has, it goes and the request waiting in the kernel's queue is read.
  CHECK(authorized_get(server.port(), "/v1/status") == 200);
  CHECK(server.counts().paused >= 1);
  CHECK(server.counts().dropped >= 1);
  for (const int fd : burst) ::close(fd);
}

TEST_CASE("master http: 400 agents from one address through 8 slots are all answered", "[live][cluster][network]") {
  HttpLimits limits;
  limits.max_connections = 8;
  HttpServer server = serve_ok(limits);
  // A job starting behind one address (a NAT, one test host): far more connections than slots,
  // each sending its request with its connect. Each agent retries twice, as the agent link does.
  std::atomic<int> answered{0};
  std::vector<std::thread> agents;
  for (int t = 0; t < 16; ++t) {
    agents.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        for (int attempt = 0; attempt < 3; ++attempt) {
          if (authorized_get(server.port(), "/v1/report") == 200) {
            ++answered;
            break;
          }
        }
      }
    });
  }
  for (auto& agent : agents) agent.join();
  CHECK(answered == 400);
}

namespace {

//! A master whose HTTP side can be held (a report then waits on it), with its heartbeat port (the
//! same number, over UDP) for the test to read; the lines of the reports it answered.
struct HeldMaster {
  std::mutex mutex;
  std::condition_variable released;
  bool holding = false, release = false;
  std::vector<std::string> lines_heard;
  HttpServer server{"127.0.0.1", 0, {}, [](const std::string& a) { return same_secret(a, "Bearer " + kToken); },
                    [this](const HttpRequest& r) {
                      if (r.target == "/v1/join") return HttpAnswer{200, to_json(JoinReply{"job", 0, 0.2}).dump()};
                      std::unique_lock lock(mutex);
                      if (holding) released.wait_for(lock, std::chrono::seconds(30), [&] { return release; });
                      if (r.target == "/v1/report")
                        for (const auto& line : parse_report(r.body).lines) lines_heard.push_back(line.line);
                      Plan p;
                      p.generation = 1;
                      p.what = PlanKind::Run;
                      p.node_rank = 0;
                      p.nnodes = 1;
                      return HttpAnswer{200, to_json(p).dump()};
                    }};
  int udp = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  HeldMaster() {
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(static_cast<std::uint16_t>(server.port()));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(udp, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
  }
  ~HeldMaster() {
    let_go();
    ::close(udp);
  }
  void hold() {
    std::lock_guard lock(mutex);
    holding = true;
  }
  void let_go() {
    {
      std::lock_guard lock(mutex);
      release = true;
    }
    released.notify_all();
  }
  //! The heartbeats that arrive within `seconds`.
  std::vector<Heartbeat> heartbeats(double seconds, std::size_t enough = 1000) {
    std::vector<Heartbeat> out;
    char buffer[kLargestDatagram + 1];
    const auto t = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t < std::chrono::duration<double>(seconds) && out.size() < enough) {
      pollfd ready{udp, POLLIN, 0};
      if (::poll(&ready, 1, 100) <= 0) continue;
      const ssize_t n = ::recv(udp, buffer, sizeof buffer, 0);
      if (const auto h = n > 0 ? decode_heartbeat(std::string(buffer, static_cast<std::size_t>(n)), kToken) : std::nullopt) out.push_back(*h);
    }
    return out;
  }
};

void wait_for_plan(AgentLink& link) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!link.plan() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(link.plan());
}

}  // namespace

TEST_CASE("agent link: heartbeats go on while a report waits on a master that does not answer", "[live][cluster][network]") {
  HeldMaster master;
  AgentLink link("127.0.0.1", master.server.port(), kToken, {"agent-0", 0, "host-0", "127.0.0.1", false});
  wait_for_plan(link);
  link.status({1, NodeState::Running, 1, std::nullopt});
  master.hold();
  link.fault({});  // a report now: it waits on the held master
  // At a 0.2 s interval, ~15 in these 3 s; one thread for both sent none while the report waited.
  CHECK(master.heartbeats(3, 4).size() >= 4);
}

TEST_CASE("agent link: no datagram says finished before node rank 0's last lines have gone by HTTP", "[live][cluster][network]") {
  HeldMaster master;
  AgentLink link("127.0.0.1", master.server.port(), kToken, {"agent-0", 0, "host-0", "127.0.0.1", false});
  wait_for_plan(link);
  link.status({1, NodeState::Running, 397, std::nullopt});
  link.trainer_line("step 397 0.02 rank=0");
  master.hold();  // the next report waits on the master
  // The trainer's last lines, then the node's state: finished. The report carrying them (and
  // "finished") is held by the master; the datagrams sent meanwhile must not overtake it.
  for (const char* line : {"step 398 0.02 rank=0", "step 399 0.02 rank=0", "step 400 0.02 rank=0", "done 400 rank=0"}) link.trainer_line(line);
  link.status({1, NodeState::Finished, 400, std::nullopt});
  const auto beats = master.heartbeats(2);
  CHECK(beats.size() >= 2);  // the node is alive the whole time
  CHECK(std::none_of(beats.begin(), beats.end(), [](const Heartbeat& h) { return h.state == NodeState::Finished; }));  // "finished" waits for its lines
  master.let_go();
  for (auto t = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t < std::chrono::seconds(20);) {
    {
      std::lock_guard lock(master.mutex);
      if (!master.lines_heard.empty() && master.lines_heard.back() == "done 400 rank=0") break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::lock_guard lock(master.mutex);
  CHECK(master.lines_heard.size() == 5);
  CHECK(master.lines_heard.back() == "done 400 rank=0");
}
