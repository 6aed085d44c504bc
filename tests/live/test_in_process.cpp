// In-process restart under the job master (issue 51), without the network: which faults keep the
// trainers (the plan's in_process, with the stop and with the run), the restart row's path for
// calibrate, and the messages that carry it (the plan's JSON, the trainer's `inprocess` and its
// launcher's `failed` lines), and the policy file that asks for it.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "live/cluster/protocol.hpp"
#include "live/job/heartbeat.hpp"
#include "live/job/job_master.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"
#include "one_node_job.hpp"

using namespace ctwin;
using namespace ctwin::live;
using Clock = JobMaster::Clock;

namespace {

Scenario in_process_policy(const std::string& mechanism = "in_process") {
  return parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}},
                                        "restart": {"mechanism": ")" + mechanism + R"(", "in_process": {"overhead": "2s"}}})",
                                    "policy.json");
}

Report report(const std::string& agent, std::int64_t generation, NodeState state, std::optional<std::vector<std::int64_t>> restorable = {}) {
  return test::node_report(agent, generation, state, std::move(restorable));
}

//! Two nodes running generation 1 from scratch.
void start_two(JobMaster& m, Clock::time_point now) {
  m.join({"a", 0, "h0", "10.0.0.1", false}, now);
  m.join({"b", 1, "h1", "10.0.0.2", false}, now);
  m.report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now);
  REQUIRE(m.report(report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{}), now).what == PlanKind::Run);
}

//! Node b reports `fault` at generation 1; both stop holding step 20. The plans: b's stop, then the run.
std::pair<Plan, Plan> fault_and_restart(JobMaster& m, const LiveFaultClass& fault, Clock::time_point now) {
  Report crash = report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{20});
  crash.fault = FaultReport{fault, "exit 134", -1, -1, 0.01};
  const Plan stop = m.report(crash, now);
  m.report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{20}), now);
  const Plan run = m.report(report("b", 2, NodeState::Stopped, std::vector<std::int64_t>{20}), now);
  return {stop, run};
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("job master: a crash restarts in process when the policy says so - the stop keeps the trainers, the run rejoins them",
          "[live][cluster]") {
  const Scenario s = in_process_policy();
  REQUIRE(s.restart.mechanism == RestartMechanism::InProcess);
  CHECK(s.restart.in_process_us == 2'000'000);
  const RecoveryController controller(s);
  MasterOptions o;
  o.nnodes = 2;
  o.events_path = (std::filesystem::temp_directory_path() / ("ctwin-in-process-" + std::to_string(::getpid()) + ".csv")).string();
  auto now = Clock::now();
  {
    JobMaster m(s, controller, o, now);
    start_two(m, now);
    now += std::chrono::seconds(2);
    const auto [stop, run] = fault_and_restart(m, classify_named(s, "software_bug"), now);
    CHECK(stop.what == PlanKind::Stop);
    CHECK(stop.in_process);  // said with the stop: the nodes keep the trainers that can rejoin
    CHECK(run.what == PlanKind::Run);
    CHECK(run.in_process);
    CHECK(run.restore_step == 20);
    m.close(now);
  }
  // calibrate reads the path off the restart row (calibration/evidence_event_log.cpp).
  const std::string log = read_all(o.events_path);
  std::filesystem::remove(o.events_path);
  CHECK(log.find("restart,,software_bug generation=2 restore_step=20 path=in_process") != std::string::npos);
}

TEST_CASE("job master: a master killed and resumed mid-recovery keeps the in-process restart it said", "[live][cluster]") {
  const Scenario s = in_process_policy();
  const RecoveryController controller(s);
  const auto dir = std::filesystem::temp_directory_path() / ("ctwin-in-process-journal-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  MasterOptions o;
  o.nnodes = 2;
  o.journal_path = (dir / "journal.json").string();
  auto now = Clock::now();
  auto m = std::make_unique<JobMaster>(s, controller, o, now);
  start_two(*m, now);
  now += std::chrono::seconds(2);
  // b's trainer crashes; the stop says in process. The master is killed before the decision.
  Report crash = report("b", 1, NodeState::Stopped, std::vector<std::int64_t>{20});
  crash.fault = FaultReport{classify_named(s, "software_bug"), "exit 134", -1, -1, 0.01};
  REQUIRE(m->report(crash, now).in_process);
  m.reset();
  m = std::make_unique<JobMaster>(s, controller, o, now);
  REQUIRE(m->resumed());
  // The nodes keep the trainers the stop kept: the resumed master says the same, then runs them in process.
  CHECK(m->report(report("a", 1, NodeState::Stopped, std::vector<std::int64_t>{20}), now).in_process);
  m->report(report("a", 2, NodeState::Stopped, std::vector<std::int64_t>{20}), now);
  const Plan run = m->report(report("b", 2, NodeState::Stopped, std::vector<std::int64_t>{20}), now);
  REQUIRE(run.what == PlanKind::Run);
  CHECK(run.in_process);
  // Killed again once the run was out: the plan it sends the nodes again is the same.
  m.reset();
  m = std::make_unique<JobMaster>(s, controller, o, now);
  CHECK(m->report(report("a", 2, NodeState::Running), now).in_process);
  m->close(now);
  std::filesystem::remove_all(dir);
}

TEST_CASE("job master: a GPU reset, a lost node or the relaunch mechanism restart every process", "[live][cluster]") {
  // The plans of a job of two nodes through one fault of `fault` (a class of `s`'s): b's stop, then the run.
  const auto plans = [](const Scenario& s, const auto& fault) {
    const RecoveryController controller(s);
    MasterOptions o;
    o.nnodes = 2;
    const auto now = Clock::now();
    JobMaster m(s, controller, o, now);
    start_two(m, now);
    return fault_and_restart(m, fault(s), now);
  };
  const Scenario in_process = in_process_policy();
  // NVIDIA: Xid 48, a double-bit ECC error, resets the GPU: the CUDA context goes with the process.
  const auto reset = plans(in_process, [](const Scenario& s) { return classify_xid(s, 48); });
  CHECK_FALSE(reset.first.in_process);
  CHECK_FALSE(reset.second.in_process);
  // A lost node: its host is gone.
  CHECK_FALSE(plans(in_process, [](const Scenario& s) { return classify_stop(s, LiveStop::NodeLost); }).first.in_process);
  // The policy's mechanism is the relaunch.
  const auto relaunch = plans(in_process_policy("relaunch"), [](const Scenario& s) { return classify_named(s, "software_bug"); });
  CHECK_FALSE(relaunch.first.in_process);
  CHECK_FALSE(relaunch.second.in_process);
  // A hang is taken in process too: its node's trainer is stopped, the others rejoin.
  const auto hang = plans(in_process, [](const Scenario& s) { return classify_stop(s, LiveStop::Hang); });
  CHECK(hang.first.in_process);
  CHECK(hang.second.in_process);
}

TEST_CASE("protocol: a plan's in_process survives the round trip, and an old master's plan says none", "[live][cluster]") {
  Plan p;
  p.generation = 3;
  p.what = PlanKind::Run;
  p.node_rank = 1;
  p.nnodes = 2;
  p.master_addr = "10.0.0.1";
  p.master_port = 29500;
  p.restore_step = 40;
  p.in_process = true;
  CHECK(cluster::parse_plan(cluster::to_json(p).dump()).in_process);
  nlohmann::json older = cluster::to_json(p);
  older.erase("in_process");
  CHECK_FALSE(cluster::parse_plan(older.dump()).in_process);
}

TEST_CASE("protocol: a report says how the node's trainer started, and a path no one knows is refused", "[live][cluster]") {
  Report r = report("b", 2, NodeState::Running);
  CHECK_FALSE(cluster::parse_report(cluster::to_json(r).dump()).status.launched);
  r.status.launched = RestartPath::WarmStandby;
  CHECK(cluster::parse_report(cluster::to_json(r).dump()).status.launched == RestartPath::WarmStandby);
  nlohmann::json bad = cluster::to_json(r);
  bad["status"]["launched"] = "teleport";
  CHECK_THROWS_WITH(cluster::parse_report(bad.dump()), Catch::Contains("/status/launched") && Catch::Contains("teleport"));
}

TEST_CASE("job master: a restart whose nodes came back slower than planned says the path they took", "[live][cluster]") {
  // The warm standby planned (the policy's mechanism); node b had none ready and started cold: the
  // restart took a relaunch's time, and calibrate must not count it as a warm standby's.
  const auto run = [](const std::optional<RestartPath>& b_started) {
    const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}},
                                                     "restart": {"mechanism": "warm_standby", "warm_standby": {"overhead": "5s"}}})",
                                                  "policy.json");
    const RecoveryController controller(s);
    MasterOptions o;
    o.nnodes = 2;
    o.events_path = (std::filesystem::temp_directory_path() / ("ctwin-launched-" + std::to_string(::getpid()) + ".csv")).string();
    auto now = Clock::now();
    {
      JobMaster m(s, controller, o, now);
      start_two(m, now);
      now += std::chrono::seconds(2);
      const auto plans = fault_and_restart(m, classify_named(s, "software_bug"), now);
      REQUIRE(plans.second.what == PlanKind::Run);
      Report a = report("a", 2, NodeState::Running), b = report("b", 2, NodeState::Running);
      a.status.launched = RestartPath::WarmStandby;
      b.status.launched = b_started;
      now += std::chrono::seconds(1);
      m.report(a, now);
      m.report(b, now);
      m.report(a, now);  // said again: one row
      m.close(now);
    }
    const std::string log = read_all(o.events_path);
    std::filesystem::remove(o.events_path);
    return log;
  };
  const std::string cold = run(RestartPath::Relaunch);
  CHECK(cold.find("path=warm_standby") != std::string::npos);  // the restart row: what was planned
  const auto said = cold.find("launched generation=2 path=relaunch planned=warm_standby node_ranks=1");
  CHECK(said != std::string::npos);
  CHECK(cold.find("launched generation=2", said + 1) == std::string::npos);
  // Both in their standbys: as planned, nothing said. A node that does not say (an older agent): nothing either.
  CHECK(run(RestartPath::WarmStandby).find("launched generation") == std::string::npos);
  CHECK(run(std::nullopt).find("launched generation") == std::string::npos);
}

TEST_CASE("trainer messages: a trainer that rejoins in process, and a launcher's failed worker", "[live][job]") {
  const auto rejoins = parse_trainer_message("inprocess 3 rank=0");
  CHECK(rejoins.kind == TrainerMessage::Kind::InProcess);
  CHECK(rejoins.step == 3);  // the generation it runs
  const auto failed = parse_trainer_message("failed 134 rank=1");
  CHECK(failed.kind == TrainerMessage::Kind::WorkerFailed);
  CHECK(failed.step == 134);  // 128 + SIGABRT
  CHECK(failed.rank == 1);
  CHECK(parse_trainer_message("failed").kind == TrainerMessage::Kind::Unknown);
  CHECK(parse_trainer_message("failed x rank=1").kind == TrainerMessage::Kind::Unknown);
}

TEST_CASE("policy file: a restart mechanism, the relaunch's overhead optional, a wrong one named by its pointer", "[live][job]") {
  const Scenario plain = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "p.json");
  CHECK(plain.restart.mechanism == RestartMechanism::Relaunch);
  try {
    parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}, "restart": {"mechanism": "teleport"}})", "p.json");
    FAIL("a mechanism nobody has was taken");
  } catch (const ScenarioInvalid& e) {
    CHECK(std::string(e.what()).find("/restart/mechanism") != std::string::npos);
  }
  try {  // in_process needs its cost
    parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}, "restart": {"mechanism": "in_process"}})", "p.json");
    FAIL("in_process without its overhead was taken");
  } catch (const ScenarioInvalid& e) {
    CHECK(std::string(e.what()).find("/restart/in_process") != std::string::npos);
  }
}
