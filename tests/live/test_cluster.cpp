// The job master's logic without the network (JobMaster, in-process, time passed in), and the
// heartbeat datagrams' authentication: rendezvous, the cross-node commit, one fault stopping every
// node, a silent agent replaced by a spare, forged and replayed datagrams dropped.

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <fstream>
#include <map>
#include <unistd.h>

#include "core/event_log.hpp"
#include "live/cluster/heartbeat_datagram.hpp"
#include "live/cluster/protocol.hpp"
#include "live/job/job_master.hpp"
#include "models/scenario_loader.hpp"
#include "policies/checkpoint_policy.hpp"
#include "policies/recovery_controller.hpp"
#include "one_node_job.hpp"

using namespace ctwin;
using namespace ctwin::live;
using namespace ctwin::live::cluster;
using Clock = JobMaster::Clock;

namespace {

const std::string kToken = "unit-test-token-0123456789";

Scenario policy() {
  return parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "policy.json");
}

Report report(const std::string& agent, std::int64_t generation, NodeState state, std::optional<std::vector<std::int64_t>> restorable = {}) {
  return test::node_report(agent, generation, state, std::move(restorable));
}

}  // namespace

TEST_CASE("heartbeat datagrams: a round trip, and a forged, altered or foreign one is dropped", "[live][cluster]") {
  const Heartbeat h{"agent-7", 42, 3, NodeState::Running, 1200, 3, PlanKind::Run, 5, 77};
  const std::string datagram = encode(h, kToken);
  const auto back = decode_heartbeat(datagram, kToken);
  REQUIRE(back);
  CHECK(back->agent == "agent-7");
  CHECK(back->seq == 42);
  CHECK(back->step == 1200);
  CHECK(back->known_plan == PlanKind::Run);
  CHECK(back->incarnation == 77);
  CHECK_FALSE(decode_heartbeat(datagram, "another-token-0123456789"));  // not this job's
  std::string altered = datagram;
  altered[datagram.find("1200")] = '9';  // a step changed on the way
  CHECK_FALSE(decode_heartbeat(altered, kToken));
  CHECK_FALSE(decode_heartbeat("ctwin-heartbeat 2 a 1 1 1 running 5 1 run 0 00000000000000000000000000000000", kToken));
  CHECK_FALSE(decode_heartbeat(std::string(600, 'x'), kToken));
  const auto answer = decode_answer(encode(HeartbeatAnswer{"agent-7", 42, false, 4, PlanKind::Stop}, kToken), kToken);
  REQUIRE(answer);
  CHECK(answer->generation == 4);
  CHECK(answer->plan == PlanKind::Stop);
  CHECK(decode_answer(encode(HeartbeatAnswer{"agent-7", 43, true, 0, PlanKind::Wait}, kToken), kToken)->unknown);
}

TEST_CASE("heartbeat datagrams: the MAC is HMAC-SHA256's first 16 bytes - known answers, short and long keys", "[live][cluster]") {
  // From Python's hmac module: hmac.new(key, text, sha256).hexdigest()[:32]. A key over SHA-256's
  // 64-byte block is hashed first (RFC 2104).
  const HeartbeatAnswer unknown{"node-7", 42, true, 0, PlanKind::Wait};
  CHECK(encode(unknown, "job-token") == "ctwin-unknown 1 node-7 42 7f8d6ad3fbd3fb4cd8df30356ae6382c");
  CHECK(encode(unknown, std::string(100, 'k')) == "ctwin-unknown 1 node-7 42 c6d00b262d0684b59c7f5804a3eb8987");
  CHECK(decode_answer("ctwin-unknown 1 node-7 42 7f8d6ad3fbd3fb4cd8df30356ae6382c", "job-token"));
}

TEST_CASE("job master: rendezvous, the newest step every node holds, one fault stops every node", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  CHECK(m.join({"a", 1, "h1", "10.0.0.1", false}, now).node_rank == 1);  // the rank it asked for
  CHECK(m.report(report("a", 0, NodeState::Waiting), now).what == PlanKind::Wait);  // one node short
  CHECK(m.join({"b", -1, "h0", "10.0.0.2", false}, now).node_rank == 0);
  CHECK(m.join({"c", -1, "h2", "10.0.0.3", false}, now).node_rank == -1);  // a spare
  // Gathering generation 1: both stop and say what they hold; the job runs from the newest common step.
  CHECK(m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{30, 20}), now).what == PlanKind::Stop);
  const Plan run = m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{20, 10}), now);
  CHECK(run.what == PlanKind::Run);
  CHECK(run.generation == 1);
  CHECK(run.restore_step == 20);
  CHECK(run.master_addr == "10.0.0.2");  // node rank 0's address
  // A crash on node rank 1: the next plan of every node is stop, generation 2.
  Report crash = report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{40, 30});
  crash.fault = FaultReport{classify_named(s, "software_bug"), "exit 1", -1, -1, 0.5};
  now += std::chrono::seconds(1);
  const Plan stop = m.report(crash, now);
  CHECK(stop.what == PlanKind::Stop);
  CHECK(stop.reason == "the job restarts after software_bug");  // named at once, before the decision
  // Node rank 0 learns it from its heartbeat's answer, and a replayed heartbeat is ignored.
  const std::int64_t incarnation = run.incarnation;  // this master's: the datagrams say it
  CHECK(incarnation > 0);
  const auto answer = m.heartbeat({"b", 7, 1, NodeState::Running, 35, 1, PlanKind::Run, 0, incarnation}, now);
  REQUIRE(answer);
  CHECK(answer->generation == 2);
  CHECK(answer->plan == PlanKind::Stop);
  CHECK_FALSE(m.heartbeat({"b", 7, 1, NodeState::Running, 35, 1, PlanKind::Run, 0, incarnation}, now));
  CHECK(m.heartbeat({"nobody", 1, 1, NodeState::Running, 1, 1, PlanKind::Run}, now)->unknown);
  // Both stopped for generation 2 (a killed during its save of 40 holds 30 whole): the commit is 30.
  CHECK(m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{30, 20}), now).what == PlanKind::Stop);
  const Plan again = m.report(report("b", 2, NodeState::Stopped, std::vector<std::int64_t>{40, 30}), now);
  CHECK(again.what == PlanKind::Run);
  CHECK(again.restore_step == 30);
  CHECK(m.restarts() == 1);
  CHECK(m.interruptions().at("software_bug") == 1);
  // Another crash. A datagram node rank 0 sent while it still ran generation 2 arrives after its
  // stop (by HTTP, generation 3): it does not make the node "running" at generation 2 again (it
  // would hold the gathering for good), and it is answered, so that the node reports by HTTP.
  m.report(report("b", 2, NodeState::Running), now);
  crash.status.generation = 2;
  m.report(crash, now);
  m.report(report("b", 3, NodeState::Stopped, std::vector<std::int64_t>{30}), now);
  CHECK(m.heartbeat({"b", 9, 2, NodeState::Running, 36, 2, PlanKind::Run, 0, incarnation}, now));
  CHECK(m.status(now)["nodes"][0]["state"] == "stopped");
  CHECK(m.status(now)["nodes"][0]["generation"] == 3);
}

TEST_CASE("job master: an agent gone silent loses its node, a hot spare takes its rank", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 5;
  o.own_stall_s = 2;  // ticked once a second
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  m.join({"a", 0, "h0", "", false}, now);
  m.join({"b", 1, "h1", "", false}, now);
  m.join({"spare", -1, "h2", "", true}, now);
  m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  CHECK(m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now).restore_step == -1);  // from scratch
  // b falls silent; a and the spare go on reporting.
  for (int second = 1; second <= 7; ++second) {
    now += std::chrono::seconds(1);
    m.report(report("a", 1, NodeState::Running), now);
    m.report(report("spare", 1, NodeState::Waiting), now);
    m.tick(now);
  }
  CHECK(m.interruptions().at("node_lost") == 1);
  m.report(report("spare", 2, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  // Once node rank 0 has stopped, the decision is made: the spare takes rank 1. What the spare
  // said it held was for no rank: the job runs once it has said what it holds as rank 1 (a spare
  // that restored what another node held would fail: tests/live/cluster_test.py agent_loss).
  CHECK(m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{40}), now).what == PlanKind::Stop);
  Report spare = report("spare", 2, NodeState::Stopped, std::vector<std::int64_t>{30});
  spare.status.node_rank = 1;
  const Plan run = m.report(spare, now);
  CHECK(run.what == PlanKind::Run);
  CHECK(run.generation == 2);
  CHECK(run.node_rank == 1);
  CHECK(run.restore_step == -1);  // no step both hold
  CHECK(m.status(now)["nodes"][1]["host"] == "h2");
}

TEST_CASE("job master: its own stall is not its agents' silence, and every agent silent at once is waited for", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 5;
  o.own_stall_s = 2;  // ticked once a second
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  m.join({"a", 0, "h0", "", false}, now);
  m.join({"b", 1, "h1", "", false}, now);
  m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  const auto both_report = [&](int seconds) {
    for (int second = 0; second < seconds; ++second) {
      now += std::chrono::seconds(1);
      m.report(report("a", 1, NodeState::Running), now);
      m.report(report("b", 1, NodeState::Running), now);
      m.tick(now);
    }
  };
  both_report(2);
  // SIGSTOP for 35 s, then SIGCONT: the first look after it finds nobody silent.
  now += std::chrono::seconds(35);
  m.tick(now);
  now += std::chrono::seconds(1);
  m.tick(now);
  CHECK(m.interruptions().empty());
  CHECK(m.status(now)["phase"] == "running");
  // Every agent silent together (a network cut at the master), past the timeout: none is lost.
  for (int second = 0; second < 12; ++second) {
    now += std::chrono::seconds(1);
    m.tick(now);
  }
  CHECK(m.interruptions().empty());
  CHECK(m.status(now)["generation"] == 1);
  // They come back; then b alone falls silent while a is heard: b's node is lost.
  both_report(2);
  for (int second = 0; second < 7; ++second) {
    now += std::chrono::seconds(1);
    m.report(report("a", 1, NodeState::Running), now);
    m.tick(now);
    if (second == 4) CHECK(m.metrics(now).report_age_s.at(1) == Approx(5));  // the silence building up, by node rank
  }
  CHECK(m.interruptions().at("node_lost") == 1);
}

TEST_CASE("job master: a fault's rows are journaled with the decision, so a master killed then keeps them", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  const auto dir = std::filesystem::temp_directory_path() / ("ctwin-journal-rows-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 5;
  o.own_stall_s = 2;  // ticked once a second
  o.journal_path = (dir / "journal.json").string();
  o.events_path = (dir / "job.csv").string();
  auto now = Clock::now();
  {
    JobMaster m(s, controller, o, now);
    m.join({"a", 0, "h0", "", false}, now);
    m.join({"b", 1, "h1", "", false}, now);
    m.join({"spare", -1, "h2", "", true}, now);
    m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
    m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
    for (int second = 1; second <= 7; ++second) {  // b falls silent
      now += std::chrono::seconds(1);
      m.report(report("a", 1, NodeState::Running), now);
      m.report(report("spare", 1, NodeState::Waiting), now);
      m.tick(now);
    }
    // a stops: the decision is made (the spare takes rank 1), and the master dies before its next tick.
    m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  }
  JobMaster resumed(s, controller, o, now);
  CHECK(resumed.resumed());
  resumed.close(now);
  std::ifstream in(o.events_path);
  const EventLog log = read_event_log(in, o.events_path);
  int faults = 0;
  for (const auto& e : log.events) faults += e.kind == EventKind::Fault;
  CHECK(faults == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("job master: a step that fails to restore is given up for an older one, then scratch, then the job ends", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 1;
  o.max_restarts = 100;
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  m.join({"a", 0, "h0", "", false}, now);
  // One bad shard on the node (its CRCs verified) would not be offered; a step whose restore fails
  // for another reason is, and the trainers fail before they restore it, every time.
  const std::vector<std::int64_t> held{77, 47};
  std::vector<std::int64_t> restored;
  Plan plan = m.report(report("a", 1, NodeState::Stopped, held), now);
  for (int attempt = 0; attempt < 12 && !m.done(); ++attempt) {
    REQUIRE(plan.what == PlanKind::Run);
    restored.push_back(plan.restore_step);
    Report crash = report("a", plan.generation, NodeState::Stopped, held);
    crash.fault = FaultReport{classify_named(s, "software_bug"), "cannot restore the job's step", -1, -1, 0};
    crash.fault->before_restoring = true;
    now += std::chrono::seconds(1);
    m.report(crash, now);
    plan = m.report(report("a", plan.generation + 1, NodeState::Stopped, held), now);
  }
  CHECK(restored == std::vector<std::int64_t>{77, 77, 47, 47, -1, -1, -1});
  REQUIRE(m.done());
  CHECK(m.exit_code() == 1);
  CHECK(m.reason().find("failed 3 times in a row before it restored") != std::string::npos);
}

TEST_CASE("job master: a master restarted after each failed restore still gives the step up", "[live][cluster]") {
  // The same crash loop as above, the master killed and resumed from its journal after every
  // crash: the failed restores and the steps given up are journaled, so the walk back is the same.
  const Scenario s = policy();
  const RecoveryController controller(s);
  const auto dir = std::filesystem::temp_directory_path() / ("ctwin-journal-refused-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  MasterOptions o;
  o.nnodes = 1;
  o.max_restarts = 100;
  o.journal_path = (dir / "journal.json").string();
  auto now = Clock::now();
  auto m = std::make_unique<JobMaster>(s, controller, o, now);
  m->join({"a", 0, "h0", "", false}, now);
  const std::vector<std::int64_t> held{77, 47};
  std::vector<std::int64_t> restored;
  Plan plan = m->report(report("a", 1, NodeState::Stopped, held), now);
  for (int attempt = 0; attempt < 12 && !m->done(); ++attempt) {
    REQUIRE(plan.what == PlanKind::Run);
    restored.push_back(plan.restore_step);
    m.reset();  // killed once the plan was out (it was journaled first)
    m = std::make_unique<JobMaster>(s, controller, o, now);
    REQUIRE(m->resumed());
    Report crash = report("a", plan.generation, NodeState::Stopped, held);
    crash.fault = FaultReport{classify_named(s, "software_bug"), "cannot restore the job's step", -1, -1, 0};
    crash.fault->before_restoring = true;
    now += std::chrono::seconds(1);
    m->report(crash, now);
    plan = m->report(report("a", plan.generation + 1, NodeState::Stopped, held), now);
  }
  CHECK(restored == std::vector<std::int64_t>{77, 77, 47, 47, -1, -1, -1});
  REQUIRE(m->done());
  CHECK(m->reason().find("failed 3 times in a row before it restored") != std::string::npos);
  m.reset();
  std::filesystem::remove_all(dir);
}

TEST_CASE("job master: every plan names the run, and a node whose persist folder is another run's ends the job, exit 2", "[live][cluster]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.job = "job42";
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  m.join({"a", 0, "h0", "", false}, now);
  m.join({"b", 1, "h1", "", false}, now);
  m.join({"c", -1, "h2", "", true}, now);
  const Plan plan = m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  CHECK(plan.run.rfind("job42/", 0) == 0);
  CHECK_FALSE(plan.adopt_steps);
  CHECK(parse_plan(to_json(plan).dump()).run == plan.run);
  // A spare whose folder is another run's is no spare; the job goes on.
  Report spare = report("c", 1, NodeState::Waiting);
  spare.status.problem = "the persist folder /ckpt holds the steps of run job42/old";
  CHECK(m.report(spare, now).what == PlanKind::Exit);
  CHECK_FALSE(m.done());
  CHECK(m.spares() == 0);
  // A node holding a rank: the job ends, exit 2, naming the node and why.
  Report b = report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{77});
  b.status.problem = "the persist folder /ckpt holds the steps of run job42/old";
  m.report(b, now);
  REQUIRE(m.done());
  CHECK(m.exit_code() == 2);
  CHECK(m.reason() == "node rank 1 on h1: the persist folder /ckpt holds the steps of run job42/old");
}

TEST_CASE("protocol: a malformed report names the field", "[live][cluster]") {
  CHECK_THROWS_WITH(parse_report(R"({"protocol": 3, "agent": "x", "status": {"generation": 1, "state": "dancing"}})"),
                    Catch::Contains("/status/state"));
  CHECK_THROWS_WITH(parse_report(R"({"protocol": 1, "agent": "x", "status": {"generation": 1, "state": "running"}})"),
                    Catch::Contains("/protocol"));
  // A fault carries the class its node resolved: its effect and action too, by name.
  CHECK_THROWS_WITH(parse_report(R"({"protocol": 3, "agent": "x", "status": {"generation": 1, "state": "stopped"},
                                     "fault": {"class": "software_bug", "effect": "crash"}})"),
                    Catch::Contains("/fault/action"));
  CHECK_THROWS_WITH(parse_report(R"({"protocol": 3, "agent": "x", "status": {"generation": 1, "state": "stopped"},
                                     "fault": {"class": "software_bug", "effect": "melt", "action": "restart"}})"),
                    Catch::Contains("/fault/effect"));
  CHECK_THROWS_WITH(parse_report(R"({"protocol": 3, "agent": "x", "status": {"generation": 1, "state": "running"}, "extra": 1})"),
                    Catch::Contains("/extra"));
  CHECK_THROWS_AS(parse_report("[1, 2"), ProtocolError);
  // When it left, by the agent's steady clock: bounded, so no gap the master takes can overflow.
  CHECK_THROWS_WITH(parse_report(R"({"protocol": 3, "agent": "x", "status": {"generation": 1, "state": "running"}, "sent_us": 9223372036854775807})"),
                    Catch::Contains("/sent_us"));
  Report stamped = report("x", 3, NodeState::Stopped, std::vector<std::int64_t>{5});
  stamped.sent_us = 123'456'789;
  CHECK(parse_report(to_json(stamped).dump()).sent_us == 123'456'789);
  CHECK(parse_report(to_json(report("x", 3, NodeState::Stopped, std::vector<std::int64_t>{5})).dump()).status.restorable->at(0) == 5);
  Report refusing = report("x", 3, NodeState::Stopped, std::nullopt);
  refusing.status.problem = "the persist folder /ckpt holds the steps of run job42/aaa";
  CHECK(parse_report(to_json(refusing).dump()).status.problem == refusing.status.problem);
  Report with_fault = report("x", 3, NodeState::Stopped, std::nullopt);
  FaultReport sdc;
  sdc.fault.name = "gpu_sdc";
  sdc.fault.effect = Effect::Sdc;
  sdc.fault.act = Act::Replace;
  sdc.detail = "loss spike";
  sdc.gpu = 2;
  sdc.age_s = 1.5;
  sdc.clean_step = 40;
  with_fault.fault = sdc;
  const FaultReport back = *parse_report(to_json(with_fault).dump()).fault;
  CHECK((back.fault.name == "gpu_sdc" && back.fault.effect == Effect::Sdc && back.fault.act == Act::Replace));
  CHECK((back.gpu == 2 && back.clean_step == 40 && back.fault.rolls_back()));
  CHECK(!back.ask);
  // A health fault the trainer runs through is put to the master, which asks the controller.
  with_fault.fault->ask = true;
  with_fault.fault->id = 7;
  const FaultReport asked = *parse_report(to_json(with_fault).dump()).fault;
  CHECK((asked.ask && asked.id == 7));
  // What only the node sees goes to the job's log; the job's own rows are never a node's to write.
  Report seen = report("x", 3, NodeState::Running, std::nullopt);
  seen.events.push_back({EventKind::SlowBegin, "clocks throttled", 1, -1, {}, 0.5, 0.25});
  const Report seen_back = parse_report(to_json(seen).dump());
  REQUIRE(seen_back.events.size() == 1);
  CHECK((seen_back.events[0].kind == EventKind::SlowBegin && seen_back.events[0].gpu == 1 && seen_back.events[0].speed == 0.5 &&
         seen_back.events[0].age_s == 0.25 && seen_back.events[0].note == "clocks throttled"));
  seen.events[0].kind = EventKind::Interrupted;
  CHECK_THROWS_WITH(parse_report(to_json(seen).dump()), Catch::Contains("/events/0/kind"));
  seen.events[0].kind = EventKind::Ledger;
  CHECK_THROWS_WITH(parse_report(to_json(seen).dump()), Catch::Contains("/events/0/kind"));
}

TEST_CASE("job master: the checkpoint cadence comes from the policy, and shortens as interruptions come", "[live][cluster]") {
  // Adaptive (Daly for the MTBF estimated online): prior 60 s, worth one failure.
  const Scenario s = parse_policies_or_scenario(
      R"({"schema_version": 1, "policies": {"checkpoint": {"type": "adaptive", "mtbf": "60s", "prior_weight": 1}}})", "policy.json");
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 1;
  o.report_interval_s = 0.2;
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  test::OneNodeJob job{m, now};
  CHECK(job.start() == PlanKind::Run);
  const Plan first = job.train(3);
  REQUIRE(first.cadence.changes.size() == 1);
  // Daly for a 10 ms save and an MTBF of (60 s + ~3 s) / 1: ~1.1 s, ~55 steps of 20 ms.
  const std::int64_t every = first.cadence.changes.back().every;
  CHECK(every == Approx(daly_interval_s(0.01, 61.5) / 0.02).epsilon(0.1));
  CHECK(first.cadence.changes.back().from > job.step - 150);  // announced ahead of the job
  // Three crashes in quick succession: the estimated MTBF falls to (60 + T) / 4, the cadence follows.
  for (int crash = 0; crash < 3; ++crash) {
    CHECK(job.crash(s, "software_bug") == PlanKind::Run);
    job.train(1);
  }
  const Plan after = job.train(2);
  REQUIRE(after.cadence.revision >= 2);
  CHECK(after.cadence.changes.back().every < every * 0.7);
  CHECK(after.cadence.changes.back().every == Approx(daly_interval_s(0.01, (60 + 9.0) / 4) / 0.02).epsilon(0.15));
}

TEST_CASE("job master: elastic, a lost node with no spare shrinks the job, a spare that comes grows it back at a checkpoint",
          "[live][cluster]") {
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {
      "checkpoint": {"type": "fixed", "interval": "1h"}, "elastic": {"mode": "shrink", "replica_nodes": 1}}})",
                                                "policy.json");
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.agent_timeout_s = 5;
  o.own_stall_s = 2;  // ticked once a second
  o.total_steps = 100000;
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  m.join({"a", 0, "h0", "", false}, now);
  m.join({"b", 1, "h1", "", false}, now);
  m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  CHECK(m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now).nnodes == 2);
  // b falls silent: no spare, so the job goes on as one replica of one node.
  std::int64_t step = 0;
  const auto train = [&](std::int64_t generation, double seconds, bool save_at_end) {
    Plan plan;
    for (int i = 0; i < static_cast<int>(seconds / 0.1); ++i) {
      now += std::chrono::milliseconds(100);
      Report r = report("a", generation, NodeState::Running);
      r.lines.push_back({0, "step " + std::to_string(++step) + " 0.100000 rank=0"});
      if (save_at_end && i + 1 == static_cast<int>(seconds / 0.1)) r.lines.push_back({0, "checkpoint " + std::to_string(step) + " 0.010000 rank=0"});
      plan = m.report(r, now);
      m.tick(now);
    }
    return plan;
  };
  train(1, 7, false);
  CHECK(m.interruptions().at("node_lost") == 1);
  const Plan shrunk = m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  CHECK(shrunk.what == PlanKind::Run);
  CHECK(shrunk.nnodes == 1);  // WORLD_SIZE halves
  CHECK(shrunk.node_rank == 0);
  // A node comes back (a new agent, as a spare): the policy grows the job at its next checkpoint.
  m.join({"c", -1, "h2", "", false}, now);
  CHECK(train(2, 2, false).what == PlanKind::Run);  // no checkpoint yet: the job goes on
  CHECK(train(2, 0.1, true).what == PlanKind::Stop);  // the planned stop, right after the save
  CHECK(m.interruptions().size() == 1);               // growing is no interruption
  m.report(report("a", 3, NodeState::Stopped, std::vector<std::int64_t>{step}), now);
  Report c = report("c", 3, NodeState::Stopped, std::vector<std::int64_t>{step});
  c.status.node_rank = 1;
  const Plan grown = m.report(c, now);
  CHECK(grown.what == PlanKind::Run);
  CHECK(grown.nnodes == 2);
  CHECK(grown.node_rank == 1);
  CHECK(grown.restore_step == step);
}

TEST_CASE("job master: the precheck across nodes pairs nodes, and a node that never answers fails its round at the timeout",
          "[live][cluster][precheck]") {
  const Scenario s = parse_policies_or_scenario(
      R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}, "precheck": {"duration": "1s"}}})", "policy.json");
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 4;
  o.nproc_per_node = 8;
  o.precheck_timeout_s = 10;
  o.report_interval_s = 1;
  auto now = Clock::now();
  JobMaster m(s, controller, o, now);
  const std::vector<std::string> ids{"n0", "n1", "n2", "n3", "spare"};
  for (int n = 0; n < 4; ++n) m.join({ids[static_cast<std::size_t>(n)], n, ids[static_cast<std::size_t>(n)], "10.0.0.1", false}, now);
  m.join({"spare", -1, "hs", "10.0.0.9", true}, now);
  // Before the first start: every node and the spare get round 0's task once all have stopped.
  std::map<std::string, Plan> plans;
  for (const auto& id : ids) m.report(report(id, 1, NodeState::Waiting), now);
  for (const auto& id : ids) plans[id] = m.report(report(id, 1, NodeState::Waiting), now);
  for (const auto& [id, p] : plans) {
    REQUIRE(p.what == PlanKind::Precheck);
    REQUIRE(p.precheck);
    CHECK(p.precheck->gpus == 8);
    CHECK(p.precheck->timeout_s == 10);
  }
  // Round 0 pairs node ranks 0-1 and 2-3 (the spare joins the last pair): 16 and 24 GPUs.
  CHECK(plans["n0"].precheck->key == plans["n1"].precheck->key);
  CHECK(plans["n0"].precheck->ranks == 16);
  CHECK(plans["n1"].precheck->first_rank == 8);
  CHECK(plans["spare"].precheck->ranks == 24);
  CHECK(plans["spare"].precheck->key == plans["n3"].precheck->key);
  auto answer = [&](const std::string& id, bool passed, double seconds) {
    Report r = report(id, 1, NodeState::Waiting);
    r.precheck = NodeCheck{plans[id].precheck->key, passed, seconds, 1e12, 0.1, passed ? "" : "all-reduce timed out"};
    plans[id] = m.report(r, now);
    return plans[id];
  };
  // Node 1 never answers (a hung GPU process its agent could not even report). Its partner's
  // all-reduce gave up at the timeout; everyone else passed.
  CHECK(answer("n0", false, 10).what == PlanKind::Stop);  // its part done: it waits for the round
  answer("n2", true, 1.0);
  answer("n3", true, 1.1);
  answer("spare", true, 1.05);
  now += std::chrono::seconds(5);
  m.tick(now);
  CHECK(m.status(now)["precheck"]["round"] == 0);  // still waiting for node 1
  now += std::chrono::seconds(10);  // past the timeout and the agents' grace: the round ends without it
  m.tick(now);
  CHECK(m.status(now)["precheck"]["round"] == 1);
  // Round 1 pairs fastest with slowest: node 1 beside a healthy node, not beside node 0 again.
  const Plan p1 = m.report(report("n1", 1, NodeState::Waiting), now);
  REQUIRE(p1.what == PlanKind::Precheck);
  plans["n1"] = p1;
  for (const char* id : {"n0", "n2", "n3", "spare"}) plans[id] = m.report(report(id, 1, NodeState::Waiting), now);
  CHECK(plans["n0"].precheck->key != plans["n1"].precheck->key);
  for (const char* id : {"n0", "n2", "n3", "spare"}) {
    const bool beside_n1 = plans[id].precheck->key == plans["n1"].precheck->key;
    answer(id, !beside_n1, beside_n1 ? 10 : 1.0);
  }
  now += std::chrono::seconds(15);  // node 1 again silent: its round ends at the timeout and the grace
  m.tick(now);
  // Node 1 failed both rounds: evicted, the spare takes rank 1, the job starts.
  const nlohmann::json st = m.status(now);
  CHECK(st["precheck"].is_null());
  CHECK(st["nodes"][1]["agent"] == "spare");
  CHECK(m.report(report("n1", 1, NodeState::Waiting), now).what == PlanKind::Exit);
}
