//! The CPU backend's all-reduce, as the precheck runs it between processes: the leader listens
//! only where it says it does, and only ranks that were given the id join the sum.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "live/backend/cpu_device.hpp"

using namespace ctwin::live;

namespace {

struct Id {
  std::string address, token;
  int port = 0;
};

Id parse(const std::vector<unsigned char>& id) {
  const std::string text(reinterpret_cast<const char*>(id.data()));
  const auto last = text.rfind(':'), colon = text.rfind(':', last - 1);
  return {text.substr(0, colon), text.substr(last + 1), std::stoi(text.substr(colon + 1, last - colon - 1))};
}

//! A process that found the port but was not given the id: it connects and sends what it has.
int stranger(const Id& id, const std::string& says) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(id.port));
  ::inet_pton(AF_INET, id.address.c_str(), &addr.sin_addr);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::send(fd, says.data(), says.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(says.size()));
  return fd;
}

std::vector<unsigned char> with_token(std::vector<unsigned char> id, const std::string& token) {
  const std::string text(reinterpret_cast<const char*>(id.data()));
  const std::string changed = text.substr(0, text.rfind(':') + 1) + token;
  std::fill(id.begin(), id.end(), 0);
  std::copy(changed.begin(), changed.end(), id.begin());
  return id;
}

}  // namespace

TEST_CASE("cpu all-reduce: the id names an address, a port and a 128-bit token", "[live][collective][network]") {
  CpuDevice leader;
  const Id a = parse(leader.make_comm_id()), b = parse(leader.make_comm_id());
  in_addr parsed{};
  CHECK(::inet_pton(AF_INET, a.address.c_str(), &parsed) == 1);
  CHECK(a.address != "0.0.0.0");
  CHECK(a.token.size() == 32);
  CHECK(a.token.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a.token != b.token);  // fresh for every id
  CHECK(a.port != b.port);
}

TEST_CASE("cpu all-reduce: a connection without the token is dropped and the ranks still meet", "[live][collective][network]") {
  CpuDevice leader, member;
  const auto id = leader.make_comm_id();
  const Id parts = parse(id);
  // The stray connection comes first, before the member: the leader must not count it as a rank.
  const int stray = stranger(parts, std::string(32, 'x'));
  double member_s = -1;
  std::thread other([&] { member_s = member.allreduce_seconds(id, 2, 1, std::size_t(1) << 20, 2, 60); });
  const double leader_s = leader.allreduce_seconds(id, 2, 0, std::size_t(1) << 20, 2, 60);
  other.join();
  CHECK(leader_s > 0);
  CHECK(member_s > 0);
  // The leader closed the stray connection: reading it ends (0 bytes) rather than waiting.
  char byte = 0;
  CHECK(::recv(stray, &byte, 1, 0) <= 0);
  ::close(stray);
}

TEST_CASE("cpu all-reduce: a rank with the wrong token cannot join, both sides fail by the deadline", "[live][collective][network]") {
  CpuDevice leader, member;
  const auto id = leader.make_comm_id();
  const auto forged = with_token(id, std::string(32, '0'));
  bool member_failed = false;
  std::thread other([&] {
    try {
      member.allreduce_seconds(forged, 2, 1, std::size_t(1) << 16, 1, 3);
    } catch (const std::exception&) {
      member_failed = true;
    }
  });
  CHECK_THROWS_AS(leader.allreduce_seconds(id, 2, 0, std::size_t(1) << 16, 1, 2), CollectiveTimeout);
  other.join();
  CHECK(member_failed);
}

TEST_CASE("cpu all-reduce: an id without its token is refused before any connection", "[live][collective][network]") {
  CpuDevice member;
  std::vector<unsigned char> id(128, 0);
  const std::string old_style = "127.0.0.1:5000";
  std::copy(old_style.begin(), old_style.end(), id.begin());
  CHECK_THROWS_WITH(member.allreduce_seconds(id, 2, 1, 1024, 1, 1), Catch::Contains("address:port:token"));
}
