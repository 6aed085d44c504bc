#pragma once
//! The precheck's table (for people) and JSON (for tools).

#include <string>

#include <nlohmann/json.hpp>

#include "live/precheck/live_precheck.hpp"

namespace ctwin::live {

std::string precheck_table(const PrecheckReport& report);
nlohmann::json precheck_json(const PrecheckReport& report);

}  // namespace ctwin::live
