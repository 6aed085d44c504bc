// Restart mechanisms (issue 51) on scripted faults, ledgers worked out by hand: in-process restart
// takes the crashes and hangs whose remediation is a plain restart, a fault that resets, reboots or
// replaces falls back to the warm standby or the relaunch, and one such fault in a recovery sends
// the whole recovery that way.
#include <catch2/catch.hpp>

#include "policies/restart_path.hpp"
#include "trial/trial.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

FaultClass fault(const char* name, Effect effect, Act action, Micros action_us = 0) {
  FaultClass f;
  f.name = std::string(name) + std::string(8, '_');  // not a short literal: GCC 12 warns falsely (-Wrestrict) on those
  f.effect = effect;
  f.action = action;
  f.detection_us = 5 * s;
  f.action_us = action_us;
  return f;
}

//! Two nodes, no spare needed: a software crash (restart), a GPU fault (reset, 30 s), a hang.
TrialConfig config(RestartMechanism mechanism, Micros warm_us = -1) {
  TrialConfig c;
  c.job_nodes = 2;
  c.spare_nodes = 0;
  c.interval_us = 100 * s;
  c.save_us = 10 * s;
  c.restart_overhead_us = 300 * s;
  c.restart.mechanism = mechanism;
  c.restart.in_process_us = 8 * s;
  c.restart.warm_standby_us = warm_us;
  c.end_us = 5000 * s;
  c.faults = {fault("software", Effect::Crash, Act::Restart), fault("gpu_reset", Effect::Crash, Act::ResetGpu, 30 * s),
              fault("hang", Effect::Hang, Act::Restart)};
  return c;
}

Micros restart_after(const TrialConfig& c, const std::vector<FaultStrike>& strikes) {
  const test::Scripted run = test::run_scripted(c, strikes);
  CHECK(run.result.ledger.total() == run.result.wall_us);
  return run.result.ledger[Category::Restart];
}

}  // namespace

TEST_CASE("restart mechanisms: in-process takes a crash or a hang, a reset falls back", "[trial][restart][unit]") {
  const std::vector<FaultStrike> software{{1000 * s, 0, 0, 0, -1}}, reset{{1000 * s, 1, 1, 0, -1}}, hang{{1000 * s, 2, 0, 0, -1}};
  // Relaunch: the scenario's overhead, whatever the fault (the GPU reset adds its 30 s).
  CHECK(restart_after(config(RestartMechanism::Relaunch), software) == 300 * s);
  CHECK(restart_after(config(RestartMechanism::Relaunch), reset) == 330 * s);
  // In-process: 8 s for the crash and the hang; the reset's CUDA context is gone: a relaunch.
  CHECK(restart_after(config(RestartMechanism::InProcess), software) == 8 * s);
  CHECK(restart_after(config(RestartMechanism::InProcess), hang) == 8 * s);
  CHECK(restart_after(config(RestartMechanism::InProcess), reset) == 330 * s);
  // ... or the warm standby where the scenario keeps one.
  CHECK(restart_after(config(RestartMechanism::InProcess, 60 * s), reset) == 90 * s);
  // Warm standby alone: every restart is its cost.
  CHECK(restart_after(config(RestartMechanism::WarmStandby, 60 * s), software) == 60 * s);
  CHECK(restart_after(config(RestartMechanism::WarmStandby, 60 * s), reset) == 90 * s);
}

TEST_CASE("restart mechanisms: a recovery with a fault in-process cannot take goes the other way", "[trial][restart][unit]") {
  // The software crash at 1000 s, the GPU fault 2 s later while it is detected: one recovery, relaunched.
  const std::vector<FaultStrike> both{{1000 * s, 0, 0, 0, -1}, {1002 * s, 1, 1, 0, -1}};
  CHECK(restart_after(config(RestartMechanism::InProcess), both) == 330 * s);
  // The next recovery, a crash alone, goes in-process again.
  const std::vector<FaultStrike> then{{1000 * s, 0, 0, 0, -1}, {1002 * s, 1, 1, 0, -1}, {3000 * s, 0, 0, 0, -1}};
  CHECK(restart_after(config(RestartMechanism::InProcess), then) == 338 * s);
}

TEST_CASE("restart path: the rule the trial and the live master share", "[policies][restart][unit]") {
  RestartMechanisms spec;
  spec.mechanism = RestartMechanism::InProcess;
  spec.in_process_us = 8 * s;
  FaultClass crash = fault("software", Effect::Crash, Act::Restart), slow = fault("slow", Effect::Slow, Act::None);
  CHECK(in_process_takes(spec, crash, Act::Restart, false));
  CHECK_FALSE(in_process_takes(spec, crash, Act::Restart, true));   // the host went down
  CHECK_FALSE(in_process_takes(spec, crash, Act::Reboot, false));   // escalated, or the controller's choice
  CHECK_FALSE(in_process_takes(spec, slow, Act::None, false));      // not a stop
  spec.in_process_faults = {"hang"};                                // the scenario names its classes
  CHECK_FALSE(in_process_takes(spec, crash, Act::Restart, false));
  CHECK(restart_path(spec, true) == RestartPath::InProcess);
  CHECK(restart_path(spec, false) == RestartPath::Relaunch);
  spec.warm_standby_us = 60 * s;
  CHECK(restart_path(spec, false) == RestartPath::WarmStandby);
  CHECK(restart_overhead_us(spec, 300 * s, RestartPath::WarmStandby) == 60 * s);
  spec.mechanism = RestartMechanism::Relaunch;  // the costs given, the mechanism not chosen: a relaunch
  CHECK_FALSE(in_process_takes(spec, crash, Act::Restart, false));
  CHECK(restart_path(spec, true) == RestartPath::Relaunch);
  CHECK(std::string(to_string(RestartPath::InProcess)) == "in_process");
}
