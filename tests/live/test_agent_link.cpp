// An agent's link to a real master over 127.0.0.1 (MasterService: HTTP and the heartbeat
// datagrams): it joins, runs on datagrams, and, once the master is gone, waits quietly and
// retries by HTTP; it does not spin on the socket's "refused" error.

#include <catch2/catch.hpp>

#include <ctime>
#include <thread>

#include "live/cluster/agent_link.hpp"
#include "live/job/job_master.hpp"
#include "live/cluster/master_service.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"

using namespace ctwin;
using namespace ctwin::live;
using namespace ctwin::live::cluster;

namespace {

double process_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

//! Polls `done` every 20 ms for up to `seconds`.
template <class Done>
bool within(double seconds, Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

}  // namespace

TEST_CASE("agent link: a master gone away is waited for quietly, not spun on", "[live][cluster][timing][network]") {
  const std::string token = "unit-test-token-0123456789";
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}}})",
                                                "policy.json");
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 1;
  o.report_interval_s = 0.2;
  JobMaster master(s, controller, o, JobMaster::Clock::now());
  auto service = std::make_unique<MasterService>(master, token, "127.0.0.1", 0);
  AgentLink link("127.0.0.1", service->port(), token, {"agent-0", 0, "host-0", "127.0.0.1", false});
  // What a node's supervisor does: stopped with nothing to restore, then running once told to.
  REQUIRE(within(20, [&] {
    const auto plan = link.plan();
    if (plan && plan->what == PlanKind::Stop) link.status({plan->generation, NodeState::Stopped, -1, std::vector<std::int64_t>{}});
    if (plan && plan->what == PlanKind::Run) link.status({plan->generation, NodeState::Running, 1, std::nullopt});
    return plan && plan->what == PlanKind::Run;
  }));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // on datagrams now
  service.reset();  // the master's process died: its UDP port answers "refused"
  const double cpu_before = process_cpu_s();
  const auto wall_before = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double cpu_s = process_cpu_s() - cpu_before;
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_before).count();
  INFO("the link used " << cpu_s << " s of CPU in " << wall_s << " s with no master");
  // A spinning wait takes a whole core (at load 7 on two cores, still ~0.5 s of these 2 s); a
  // quiet one a few milliseconds of retries.
  CHECK(cpu_s < 0.2 * wall_s);
  CHECK(link.plan()->what == PlanKind::Run);  // the trainer is not disturbed meanwhile
  CHECK(link.refused().empty());
}

TEST_CASE("agent link: a master that is not up yet is said, not waited for silently", "[live][cluster][network]") {
  int port = 0;
  {  // a port nothing listens on
    const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}}})", "policy.json");
    const RecoveryController controller(s);
    JobMaster master(s, controller, MasterOptions{}, JobMaster::Clock::now());
    MasterService service(master, "unit-test-token-0123456789", "127.0.0.1", 0);
    port = service.port();
  }
  AgentLink link("127.0.0.1", port, "unit-test-token-0123456789", {"agent-0", 0, "host-0", "127.0.0.1", false});
  REQUIRE(within(10, [&] { return !link.unreachable().empty(); }));
  CHECK(link.unreachable().find("no answer from the master at 127.0.0.1:" + std::to_string(port)) == 0);
  CHECK(link.unreachable().find("no connection") != std::string::npos);
  CHECK_FALSE(link.plan());
}

TEST_CASE("agent link: a master on an IPv6 address is joined", "[live][cluster][network]") {
  const std::string token = "unit-test-token-0123456789";
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1h"}}})", "policy.json");
  const RecoveryController controller(s);
  JobMaster master(s, controller, MasterOptions{}, JobMaster::Clock::now());
  std::unique_ptr<MasterService> service;
  try {
    service = std::make_unique<MasterService>(master, token, "::1", 0);
  } catch (const std::runtime_error& e) {
    WARN("skipped: this machine has no IPv6 loopback (" << e.what() << ")");
    return;
  }
  AgentLink link("::1", service->port(), token, {"agent-0", 0, "host-0", "::1", false});
  CHECK(within(10, [&] { return link.plan().has_value(); }));
  CHECK(link.unreachable().empty());
}
