#pragma once
//! Reads a scenario file (format v1), validating everything before anything runs.
//! Problems are collected, not thrown one at a time: the user sees all of them at once.

#include <string>
#include <vector>

#include "models/scenario.hpp"
#include "models/scenario_problem.hpp"

namespace ctwin {

//! Parses and validates; `display_name` is what error lines start with (usually the path).
Scenario parse_scenario(const std::string& text, const std::string& display_name);
Scenario load_scenario(const std::string& path);
//! A JSON input's text (a scenario, a prior), refused past kLargestScenarioBytes (ScenarioInvalid).
std::string read_capped_text(const std::string& path);

//! A whole scenario, or a policy file: `schema_version` and the `policies` section alone (what the
//! live supervisor needs). A file with a `cluster` is read as a scenario.
Scenario parse_policies_or_scenario(const std::string& text, const std::string& display_name);
Scenario load_policies_or_scenario(const std::string& path);

//! FNV-1a 64 of the bytes, as 16 hex digits: names a scenario's content in reports.
std::string content_hash(const std::string& bytes);

}  // namespace ctwin
