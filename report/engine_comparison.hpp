#pragma once
//! `ctwin run --engine both`: the native engine's approximation error (sim/engine_comparison.hpp),
//! as the summary's closing table and as the JSON report's `native_approximation_error`.

#include <nlohmann/json.hpp>
#include <string>

#include "sim/engine_comparison.hpp"

namespace ctwin {

std::string engine_comparison_text(const EngineComparison& c);
nlohmann::ordered_json engine_comparison_json(const EngineComparison& c);

}  // namespace ctwin
