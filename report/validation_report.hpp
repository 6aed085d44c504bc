#pragma once
//! `ctwin validate`'s table: an observed run's figures beside the simulated trials of its period,
//! with each verdict, from the validation's JSON (calibration/validation.hpp).

#include <string>

#include <nlohmann/json.hpp>

namespace ctwin {

std::string validation_text(const nlohmann::ordered_json& report);

}  // namespace ctwin
