// A job of one node (`ctwin live run`): the job master that decides for a thousand nodes drives
// one in-process (LocalCoordination), with the options of a job no spare can join. In-process and
// instant (unit tier): the plans a single node gets for a crash, silent corruption, a replacement
// it must carry out itself, its own precheck, its restart budget, and a cadence it keeps.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "live/job/local_coordination.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"

using namespace ctwin;
using namespace ctwin::live;

namespace {

Scenario policy(const std::string& extra = "") {
  return parse_policies_or_scenario(
      R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"})" + extra + "}}", "policy.json");
}

NodeStatus stopped(std::int64_t generation, std::vector<std::int64_t> held) {
  return {generation, NodeState::Stopped, -1, std::move(held), 0};
}

//! The node stops for the plan's generation, holding `held`: the plan it then gets.
Plan stop_and_hold(LocalCoordination& job, std::vector<std::int64_t> held) {
  const auto p = job.plan();
  REQUIRE(p);
  job.status(stopped(p->generation, std::move(held)));
  return *job.plan();
}

FaultReport fault_of(const Scenario& s, const std::string& name, std::int64_t clean_step = -1) {
  FaultReport f{classify_named(s, name), "unit test", -1, -1, 0};
  f.clean_step = clean_step;
  return f;
}

}  // namespace

TEST_CASE("job of one: the master's plans restart the node from the newest step it holds, silent corruption no later than its onset",
          "[live][job][unit]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-1", 2, 10, false));
  REQUIRE(job.plan()->what == PlanKind::Stop);  // joined: the job's first generation gathers
  Plan run = stop_and_hold(job, {});
  CHECK(run.what == PlanKind::Run);
  CHECK(run.generation == 1);
  CHECK(run.restore_step == -1);  // nothing held: a fresh start
  CHECK(run.master_port == 0);     // no rendezvous named: the trainer is launched as it was given
  CHECK(run.master_addr.empty());
  CHECK(run.nproc_per_node == 2);
  job.status({1, NodeState::Running, 12, std::nullopt});

  job.fault(fault_of(s, "software_bug"));
  CHECK(job.plan()->what == PlanKind::Stop);
  CHECK(job.plan()->generation == 2);
  run = stop_and_hold(job, {30, 20});
  CHECK(run.what == PlanKind::Run);
  CHECK(run.restore_step == 30);
  CHECK(run.reason.empty());
  CHECK(run.actions.empty());  // a software bug: a restart, nothing to carry out
  job.status({2, NodeState::Running, 31, std::nullopt});

  job.fault(fault_of(s, "sdc", 25));  // clean up to step 25: step 30 is not
  run = stop_and_hold(job, {30, 20});
  CHECK(run.restore_step == 20);
  job.status({3, NodeState::Running, 31, std::nullopt});
  job.fault(fault_of(s, "sdc", 5));  // no step held is clean: from scratch, and the plan says why
  run = stop_and_hold(job, {30, 20});
  CHECK(run.restore_step == -1);
  CHECK(run.reason.find("restarts from scratch") != std::string::npos);
  CHECK(job.master().restarts() == 3);
  CHECK(job.master().interruptions().at("sdc") == 2);
}

TEST_CASE("job of one: a node named for replacement keeps its rank, no spare can come: its own command decides", "[live][job][unit]") {
  const Scenario s = policy(R"(, "xid_actions": {"79": "replace"})");
  const RecoveryController controller(s);
  LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-3", 1, 10, false));
  stop_and_hold(job, {});
  job.status({1, NodeState::Running, 5, std::nullopt});
  FaultReport xid{classify_xid(s, 79), "xid source=nvml", 1, 79, 0};
  job.fault(xid);
  const Plan run = stop_and_hold(job, {});
  CHECK(run.what == PlanKind::Run);  // not an exit: the node is still the job's
  CHECK(run.node_rank == 0);
  REQUIRE(run.actions.size() == 1);
  CHECK(run.actions[0] == "replace");
  CHECK(job.master().spares() == 0);
  CHECK(job.master().status(JobMaster::Clock::now())["nodes"][0]["agent"] == "local");
}

TEST_CASE("job of one: a health fault the trainer runs through is the master's question, let pass it asks for a checkpoint", "[live][job][unit]") {
  const Scenario s = policy(R"(, "xid_actions": {"79": "replace"})");
  const RecoveryController controller(s);
  LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-3", 1, 10, false));
  stop_and_hold(job, {});
  job.status({1, NodeState::Running, 5, std::nullopt});
  FaultReport passing{classify_xid(s, 45), "Xid 45 source=nvml", 0, 45, 0};  // NVIDIA's remediation: none
  REQUIRE(passing.fault.act == Act::None);
  passing.ask = true, passing.id = 1;
  job.fault(passing);
  Plan p = *job.plan();
  CHECK((p.generation == 1 && p.what == PlanKind::Run));  // the job goes on
  CHECK((p.answered_fault == 1 && p.checkpoint_requests == 1));  // and the trainer saves now
  CHECK(job.master().interruptions().empty());
  FaultReport stopping{classify_xid(s, 79), "Xid 79 source=nvml", 1, 79, 0};
  stopping.ask = true, stopping.id = 2;
  job.fault(stopping);
  p = *job.plan();
  CHECK((p.generation == 2 && p.what == PlanKind::Stop && p.answered_fault == 2 && p.checkpoint_requests == 1));
  CHECK(stop_and_hold(job, {}).actions == std::vector<std::string>{"replace"});  // the controller's answer, asked once
  CHECK(job.master().interruptions().at(stopping.fault.name) == 1);
}

TEST_CASE("job of one: the diagnosis's precheck is the node's own, none before the start, and failing it names the node", "[live][job][unit]") {
  const Scenario s = policy(R"(, "precheck": {"enabled": true, "duration": "1s"})");
  const RecoveryController controller(s);
  for (const bool passes : {true, false}) {
    DYNAMIC_SECTION("the check " << (passes ? "passes" : "fails")) {
      LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-5", 4, 10, true));
      CHECK(stop_and_hold(job, {}).what == PlanKind::Run);  // no check before the first start
      job.status({1, NodeState::Running, 5, std::nullopt});
      job.fault(fault_of(s, "software_bug"));
      const Plan check = stop_and_hold(job, {});
      REQUIRE(check.what == PlanKind::Precheck);
      REQUIRE(check.precheck);
      CHECK(check.precheck->gpus == 4);  // all of the node's GPUs, in one group of its own
      CHECK(check.precheck->ranks == 4);
      job.precheck_done({check.precheck->key, passes, 0.4, 0, 0, passes ? "" : "exit 1"});
      const Plan run = *job.plan();
      CHECK(run.what == PlanKind::Run);
      CHECK(run.actions == (passes ? std::vector<std::string>{} : std::vector<std::string>{"replace"}));
    }
  }
  SECTION("turned off (--no-precheck): the restart does not wait for one") {
    LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-5", 1, 10, false));
    stop_and_hold(job, {});
    job.status({1, NodeState::Running, 5, std::nullopt});
    job.fault(fault_of(s, "software_bug"));
    CHECK(stop_and_hold(job, {}).what == PlanKind::Run);
  }
}

TEST_CASE("job of one: the restart budget is the master's, and the trainers keep their own cadence", "[live][job][unit]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-7", 1, 2, false));
  stop_and_hold(job, {});
  std::int64_t generation = 1;
  for (int fault = 0; fault < 3; ++fault) {
    job.status({generation, NodeState::Running, 0, std::nullopt});
    // Steps and saves measured: a master that sets cadences would set one from these.
    for (int step = 1; step <= 20; ++step) job.trainer_line("step " + std::to_string(step) + " 0.01");
    job.trainer_line("checkpoint 20 0.002");
    job.fault(fault_of(s, "software_bug"));
    const Plan next = stop_and_hold(job, {20});
    CHECK(next.cadence.revision == 0);
    if (fault < 2) {
      REQUIRE(next.what == PlanKind::Run);
      generation = next.generation;
    } else {
      CHECK(next.what == PlanKind::Exit);
      CHECK(next.exit_code == 1);
      CHECK(next.reason == "gave up after 2 restarts");
    }
  }
}

TEST_CASE("job of one: the master keeps the one log, a node's rows land in time order, never of the job's own kinds", "[live][job][unit]") {
  const Scenario s = policy();
  const RecoveryController controller(s);
  const auto path = std::filesystem::temp_directory_path() / ("ctwin-job-of-one-" + std::to_string(::getpid()) + ".csv");
  {
    LocalCoordination job(s, controller, MasterOptions::job_of_one("gpu-4", 1, 10, false, 4, path.string()));
    stop_and_hold(job, {});
    job.status({1, NodeState::Running, 0, std::nullopt});
    job.trainer_line("restored -1 none 0");
    for (int step = 1; step <= 4; ++step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      job.trainer_line("step " + std::to_string(step) + " 0.02");
    }
    job.trainer_line("checkpoint 4 0.001");
    // Seen 50 ms ago (its report came after the checkpoint's line): it lands before the checkpoint's row.
    job.event({EventKind::SlowBegin, "clocks throttled", 1, -1, {}, 0.5, 0.05});
    job.event({EventKind::Interrupted, "a node's own interruption row", -1, -1, {}, 1.0, 0});  // the master's alone: dropped
    job.close();
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  double last = 0;
  int slow = 0, interrupted = 0, checkpoints_before_slow = 0;
  while (std::getline(in, line)) {
    const double t = std::stod(line);
    CHECK(t >= last);
    last = t;
    slow += line.find(",node-4,1,slow_begin,") != std::string::npos;
    interrupted += line.find(",interrupted,") != std::string::npos;
    checkpoints_before_slow += slow == 0 && line.find(",checkpoint,") != std::string::npos;
  }
  CHECK(slow == 1);
  CHECK(interrupted == 0);
  CHECK(checkpoints_before_slow == 0);
  std::filesystem::remove(path);
}
