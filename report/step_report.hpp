#pragma once
//! `ctwin step`'s breakdown of one training step (compute, bubble, exposed communication), as a
//! table and as JSON (schema 1).

#include <string>

#include "models/scenario.hpp"
#include "sim/step_model.hpp"
#include "sim/step_sensitivity.hpp"

namespace ctwin {

//! `dp_width` > 0: the replicas running (a shrunk job).
std::string step_text(const Scenario& s, const StepBreakdown& b, int dp_width);
//! The fields the scenario left out and what was assumed in their place.
std::string assumptions_text(const WorkloadSpec& spec);
std::string sensitivity_text(const StepSensitivity& sensitivity);
//! `sensitivity` null: not asked for.
std::string step_json(const Scenario& s, const StepBreakdown& b, const StepSensitivity* sensitivity = nullptr);

}  // namespace ctwin
