#pragma once
//! Shared by every tier of the tests: fixture paths, scenarios built from JSON, and running one
//! of ctwin's programs as a process. Needs models/ only.

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "models/scenario_problem.hpp"

#ifndef CTWIN_TEST_DIR
#error "CTWIN_TEST_DIR must point at tests/"
#endif

namespace ctwin::test {

inline std::string fixture(const std::string& name) { return std::string(CTWIN_TEST_DIR) + "/scenarios/" + name; }
//! A trace fixture (tests/traces/README.md).
inline std::string trace_file(const std::string& name) { return std::string(CTWIN_TEST_DIR) + "/traces/" + name; }
inline std::string repo_file(const std::string& relative) { return std::string(CTWIN_TEST_DIR) + "/../" + relative; }

nlohmann::json read_json(const std::string& path);
Scenario scenario_from(const nlohmann::json& doc, const std::string& name = "test.json");
//! The problems loading `doc` reports (empty: it loads).
std::vector<ScenarioProblem> load_problems(const nlohmann::json& doc);
//! Whether one of `problems` is at `pointer` with `part` in its reason.
bool says_at(const std::vector<ScenarioProblem>& problems, const std::string& pointer, const std::string& part);

//! A job of one node with one exponential crash class of mean time between failures `mtbf`,
//! blocking save `save`, restart `restart`, nothing else: the renewal model's assumptions.
nlohmann::json renewal_scenario(double mtbf_s, double interval_s, double save_s, double restart_s, double horizon_s);

//! Runs `program args` (stderr merged into stdout): its exit code and output.
std::pair<int, std::string> run_program(const std::string& program, const std::string& args);

#ifdef CTWIN_BINARY
//! The full ctwin binary (the simulator's tiers and above).
inline std::pair<int, std::string> run_ctwin(const std::string& args) { return run_program(CTWIN_BINARY, args); }
#endif
#ifdef CTWIN_LIVE_BINARY
//! The node-side binary, ctwin-live.
inline std::pair<int, std::string> run_ctwin_live(const std::string& args) { return run_program(CTWIN_LIVE_BINARY, args); }
#endif

}  // namespace ctwin::test
