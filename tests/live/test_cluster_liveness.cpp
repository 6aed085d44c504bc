// The job master's liveness without the network (JobMaster, in-process, time passed in): a
// heartbeat of an earlier master refused after a restart, a peer's crash blamed on the node that
// went silent first, a node whose agent started again taking its rank back (issue 50).

#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "live/job/job_master.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"
#include "one_node_job.hpp"

using namespace ctwin;
using namespace ctwin::live;
using Clock = JobMaster::Clock;

namespace {

Scenario policy() {
  return parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "policy.json");
}

Report report(const std::string& agent, std::int64_t generation, NodeState state, std::optional<std::vector<std::int64_t>> restorable = {}) {
  return test::node_report(agent, generation, state, std::move(restorable));
}

//! Agents a (node rank 0) and b (1) join and stop, holding nothing: generation 1's plan for b.
Plan started(JobMaster& m, Clock::time_point now) {
  m.join({"a", 0, "h0", "", false}, now);
  m.join({"b", 1, "h1", "", false}, now);
  m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  return m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
}

}  // namespace

TEST_CASE("job master: a heartbeat sent to an earlier master is no sign of life after a restart", "[live][cluster]") {
  // Issue 50: the journal keeps no sequence, so a restarted master had accepted every captured
  // datagram once: a dead node stayed "running" for as long as its old datagrams were replayed.
  const Scenario s = policy();
  const RecoveryController controller(s);
  const auto dir = std::filesystem::temp_directory_path() / ("ctwin-replay-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 5;
  o.own_stall_s = 2;  // ticked once a second
  o.journal_path = (dir / "journal.json").string();
  auto now = Clock::now();
  std::int64_t before = 0;
  {
    JobMaster m(s, controller, o, now);
    before = started(m, now).incarnation;
    CHECK_FALSE(m.heartbeat({"b", 5, 1, NodeState::Running, 10, 1, PlanKind::Run, 0, before}, now));  // heard
    m.close(now);
  }
  JobMaster again(s, controller, o, now);  // from the journal, a new incarnation
  REQUIRE(again.resumed());
  const Plan a_plan = again.report(report("a", 1, NodeState::Running), now);
  CHECK(a_plan.incarnation != before);
  // b is dead; its captured datagrams (sequence numbers this master never saw) are replayed.
  std::uint64_t seq = 6;
  for (int second = 1; second <= 7; ++second) {
    now += std::chrono::seconds(1);
    again.report(report("a", 1, NodeState::Running), now);
    const auto answer = again.heartbeat({"b", seq++, 1, NodeState::Running, 10, 1, PlanKind::Run, 0, before}, now);
    REQUIRE(answer);  // refused, and answered: a live agent fetches its plan (and the incarnation) by HTTP
    CHECK_FALSE(answer->unknown);
    again.tick(now);
  }
  CHECK(again.interruptions().at("node_lost") == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("job master: a peer's crash just after a node went silent is blamed on the lost node", "[live][cluster]") {
  // Issue 50 (the twin loop): node 1 dies with its trainer; node 0's trainer fails its collective
  // 40 ms later and says so at once, long before node 1's silence is noticed.
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 4;
  o.own_stall_s = 2;  // ticked 4 times a second
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  REQUIRE(started(m, now).what == PlanKind::Run);
  now += std::chrono::milliseconds(500);
  m.report(report("b", 1, NodeState::Running), now);  // b's last sign of life; it dies now
  now += std::chrono::milliseconds(40);
  Report crash = report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{});
  crash.fault = FaultReport{classify_named(s, "software_bug"), "exit 1 (its collective lost a peer)", -1, -1, 0.0};
  m.report(crash, now);
  for (int quarter = 0; quarter < 24; ++quarter) {
    now += std::chrono::milliseconds(250);
    m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{}), now);
    m.tick(now);
  }
  CHECK(m.status(now)["cause"] == "node_lost");
}

TEST_CASE("job master: a node whose agent started again takes its rank back at once", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 60;  // the old agent would hold the rank this long
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  const Plan run = started(m, now);
  REQUIRE(run.what == PlanKind::Run);
  now += std::chrono::seconds(1);
  // Another run's node, or none named: a spare, as before.
  JoinRequest stranger{"c", 1, "h1", "", false};
  stranger.run = "ctwin/another-run";
  CHECK(m.join(stranger, now).node_rank == -1);
  // b's agent was killed and started again: the same node id, and the run it served.
  JoinRequest back{"b2", 1, "h1", "", false};
  back.run = run.run;
  CHECK(m.join(back, now).node_rank == 1);
  CHECK(m.interruptions().at("node_lost") == 1);  // its trainer went with the old agent
  CHECK(m.status(now)["phase"] == "gathering");
  CHECK(m.status(now)["nodes"][1]["agent"] == "b2");
  CHECK(m.report(report("b", 1, NodeState::Running), now).what == PlanKind::Exit);  // the old agent, were it alive, leaves
  // Both stop for generation 2; b2 says what it holds as rank 1: the job runs, no spare waited for.
  m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  Report b2 = report("b2", 2, NodeState::Stopped, std::vector<std::int64_t>{});
  b2.status.node_rank = 1;
  const Plan again = m.report(b2, now);
  CHECK(again.what == PlanKind::Run);
  CHECK(again.generation == 2);
  CHECK(m.status(now)["spares"] == 1);  // the stranger
}

TEST_CASE("job master: an agent that only beats from its join, its reports starved, is not lost", "[live][cluster]") {
  // Issue 50 item 5: a node whose HTTP reports queue behind a flood has no plan yet; its heartbeat
  // datagrams from the join on (the join's incarnation, no plan known) keep it alive meanwhile.
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 4;
  o.own_stall_s = 2;  // ticked once a second
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  const JoinReply joined_a = m.join({"a", 0, "h0", "", false}, now);
  const JoinReply joined_b = m.join({"b", 1, "h1", "", false}, now);
  CHECK(joined_a.incarnation == joined_b.incarnation);
  CHECK(joined_b.incarnation != 0);
  m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  for (std::uint64_t second = 1; second <= 10; ++second) {  // b's reports never arrive; its datagrams do
    now += std::chrono::seconds(1);
    m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
    const auto answer = m.heartbeat({"b", second, 0, NodeState::Waiting, -1, 0, PlanKind::Wait, 0, joined_b.incarnation}, now);
    REQUIRE(answer);  // its plan is news to it: it is sent for it (by HTTP, when it gets through)
    CHECK(answer->plan == PlanKind::Stop);
    m.tick(now);
  }
  CHECK(m.interruptions().empty());
  CHECK(m.status(now)["nodes"][1]["host"] == "h1");  // still node rank 1
  // Beats of no incarnation (an agent that joined an earlier master) are no sign of life.
  for (std::uint64_t second = 11; second <= 16; ++second) {
    now += std::chrono::seconds(1);
    m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
    m.heartbeat({"b", second, 0, NodeState::Waiting, -1, 0, PlanKind::Wait, 0, 0}, now);
    m.tick(now);
  }
  CHECK(m.status(now)["nodes"][1].value("host", "") != "h1");  // lost: its rank is vacant
}
