#pragma once
//! `ctwin step`'s breakdown of one training step (compute, bubble, exposed communication), as a
//! table and as JSON (schema 1).

#include <string>

#include "models/scenario.hpp"
#include "sim/step_model.hpp"

namespace ctwin {

//! `dp_width` > 0: the replicas running (a shrunk job).
std::string step_text(const Scenario& s, const StepBreakdown& b, int dp_width);
std::string step_json(const Scenario& s, const StepBreakdown& b);

}  // namespace ctwin
