#pragma once
//! `ctwin run --sensitivity`: each assumed field's range, why it is plausible, goodput at each
//! value with its paired difference from the scenario's, and the field that moves goodput most.

#include <string>

#include <nlohmann/json.hpp>

#include "sim/run_sensitivity.hpp"

namespace ctwin {

std::string run_sensitivity_text(const RunSensitivity& s);
nlohmann::ordered_json run_sensitivity_json(const RunSensitivity& s);

}  // namespace ctwin
