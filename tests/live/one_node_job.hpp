#pragma once
// A job master driven with one node in-process (time passed in): node rank 0's trainer reporting
// 20 ms steps and a 10 ms save every 10 steps, and crashes of a class restarted from its last step.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "live/job/job_master.hpp"
#include "policies/fault_classes.hpp"

namespace ctwin::test {

inline live::Report node_report(const std::string& agent, std::int64_t generation, live::NodeState state,
                                std::optional<std::vector<std::int64_t>> restorable = {}) {
  live::Report r;
  r.agent = agent;
  r.status = {generation, state, -1, std::move(restorable)};
  return r;
}

struct OneNodeJob {
  live::JobMaster& master;
  live::JobMaster::Clock::time_point now;
  std::int64_t generation = 1, step = 0;

  //! Joins agent "a" and starts generation 1; the plan's kind.
  live::PlanKind start() {
    master.join({"a", 0, "h0", "", false}, now);
    return master.report(node_report("a", generation, live::NodeState::Stopped, std::vector<std::int64_t>{}), now).what;
  }
  //! `seconds` of training; the last plan.
  live::Plan train(double seconds) {
    live::Plan plan;
    for (int i = 0; i < static_cast<int>(seconds / 0.02); ++i) {
      now += std::chrono::milliseconds(20);
      live::Report r = node_report("a", generation, live::NodeState::Running);
      ++step;
      r.lines.push_back({0, "step " + std::to_string(step) + " 0.020000 rank=0"});
      if (step % 10 == 0) r.lines.push_back({0, "checkpoint " + std::to_string(step) + " 0.010000 rank=0"});
      plan = master.report(r, now);
      master.tick(now);
    }
    return plan;
  }
  //! The trainer crashes with a fault of `fault_class`, 100 ms later the next generation runs: its plan's kind.
  live::PlanKind crash(const Scenario& scenario, const std::string& fault_class) {
    live::Report r = node_report("a", generation, live::NodeState::Stopped, std::vector<std::int64_t>{step});
    r.fault = live::FaultReport{classify_named(scenario, fault_class), "exit 1", -1, -1, 0};
    now += std::chrono::milliseconds(100);
    master.report(r, now);
    ++generation;
    return master.report(node_report("a", generation, live::NodeState::Stopped, std::vector<std::int64_t>{step}), now).what;
  }
};

}  // namespace ctwin::test
