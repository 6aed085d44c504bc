// The process that forks a child of itself for each simulation (sim/simgrid/simulation_server.hpp):
// it answers in a fresh child every time, says when a child failed, and once it is gone the
// caller learns so and forks its own children.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>

#include "sim/simgrid/simulation_server.hpp"

using namespace ctwin;

namespace {

//! The child's pid and the request, reversed; "fail" throws, "crash" aborts.
std::string answer(const std::string& request) {
  if (request == "fail") throw std::runtime_error("asked to fail");
  if (request == "crash") ::abort();
  return std::to_string(::getpid()) + " " + std::string(request.rbegin(), request.rend());
}

}  // namespace

TEST_CASE("simulation server: each question in a child of its own, failures said, a lost server bypassed", "[physics][simgrid]") {
  auto server = SimulationServer::start(&answer, false);
  REQUIRE(server);
  const auto first = server->ask("abc");
  REQUIRE(first);
  CHECK(first->substr(first->find(' ') + 1) == "cba");
  const auto second = server->ask(std::string(100000, 'x'));  // more than a pipe holds at once
  REQUIRE(second);
  CHECK(second->size() > 100000);
  CHECK(first->substr(0, first->find(' ')) != second->substr(0, second->find(' ')));  // two children
  CHECK(first->substr(0, first->find(' ')) != std::to_string(server->pid()));
  CHECK_THROWS_WITH(server->ask("crash"), Catch::Contains("signal 6"));
  CHECK_THROWS_WITH(server->ask("fail"), Catch::Contains("exit 1"));
  CHECK(server->ask("still here"));  // a failed child leaves the server serving
  ::kill(server->pid(), SIGKILL);
  // Dead (a zombie until the destructor reaps it): its socket is closed. Wait for the state, not a time.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(server->pid()), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  CHECK(info.si_pid == server->pid());
  CHECK_FALSE(server->ask("anyone?"));
  CHECK_FALSE(server->ask("anyone?"));
}
