#pragma once
//! `ctwin step`'s breakdown of one training step (compute, bubble, exposed communication), as a
//! table and as JSON (schema 1).

#include <string>

#include "models/scenario.hpp"
#include "sim/step_model.hpp"
#include "sim/step_sensitivity.hpp"

namespace ctwin {

//! `dp_width` > 0: the replicas running (a shrunk job). `range`: the step's over what was assumed
//! (the healthy fabric at full width), printed under the point.
std::string step_text(const Scenario& s, const StepBreakdown& b, int dp_width, const StepRange* range = nullptr);
//! "4.530 s .. 10.210 s over what was assumed (schedule, gemm) and the model's own 2.3 % (preset h100-bf16)"
std::string step_range_text(const StepRange& range);
//! The fields the scenario left out and what was assumed in their place.
std::string assumptions_text(const WorkloadSpec& spec);
std::string sensitivity_text(const StepSensitivity& sensitivity);
//! `sensitivity` null: not asked for; `range` null: not computed (a slowed or shrunk step).
std::string step_json(const Scenario& s, const StepBreakdown& b, const StepSensitivity* sensitivity = nullptr, const StepRange* range = nullptr);

}  // namespace ctwin
