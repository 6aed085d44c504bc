#pragma once
//! Shared by the tests: scenario fixtures and small builders.

#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "sim/monte_carlo.hpp"
#include "trial/trial_config.hpp"

#ifndef CTWIN_TEST_DIR
#error "CTWIN_TEST_DIR must point at tests/"
#endif

namespace ctwin::test {

inline std::string fixture(const std::string& name) { return std::string(CTWIN_TEST_DIR) + "/scenarios/" + name; }
inline std::string repo_file(const std::string& relative) { return std::string(CTWIN_TEST_DIR) + "/../" + relative; }

nlohmann::json read_json(const std::string& path);
//! Runs the ctwin binary with `args` (stderr merged into stdout): its exit code and output.
std::pair<int, std::string> run_ctwin(const std::string& args);
Scenario scenario_from(const nlohmann::json& doc, const std::string& name = "test.json");

//! A job of one node with one exponential crash class of mean time between failures `mtbf`,
//! blocking save `save`, restart `restart`, nothing else: the renewal model's assumptions.
nlohmann::json renewal_scenario(double mtbf_s, double interval_s, double save_s, double restart_s, double horizon_s);

//! A trial driven by hand: `strikes` (in time order) merged with the trial's own timer, as the
//! native driver does. Keeps every event and the node in each slot at the end.
struct Scripted {
  TrialResult result;
  std::vector<RunEvent> events;
  std::vector<int> slots;
  bool has(EventKind kind) const;
  int count(EventKind kind) const;
};
Scripted run_scripted(const TrialConfig& config, const std::vector<FaultStrike>& strikes, std::uint64_t seed = 0);

RunOptions run_options(int trials, std::uint64_t seed, int jobs = 2, EngineKind engine = EngineKind::Native);

//! Same seeds, ledgers, wall times, fault counts and checkpoints, trial by trial (Catch2 checks).
void require_same_trials(const RunResult& a, const RunResult& b);

}  // namespace ctwin::test
