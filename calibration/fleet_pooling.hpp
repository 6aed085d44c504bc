#pragma once
//! The fleet's own counts pooled with a population prior (models/fleet_prior.hpp): each class
//! group of the base gets the fleet's posterior rate, and the group's classes share it by the
//! base's split. Little exposure stays near the population, much follows the fleet; a group the
//! traces do not see is still moved by the fleet factor the others show.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/calibrate.hpp"
#include "models/fleet_prior.hpp"
#include "models/scenario.hpp"

namespace ctwin::calib {

//! Overwrites the rate and rate_uncertainty of every grouped class in `doc` (those the base marks
//! with `group`) with the pooled posterior, and says how in the report's `pooling`. Returns false
//! when the base has no grouped class (nothing pooled).
bool apply_population_prior(nlohmann::ordered_json& doc, const Scenario& base, const std::vector<ClassEstimate>& estimates,
                            const PopulationPrior& prior, const std::string& prior_file, nlohmann::ordered_json& report);

//! The fleet's covariates as its scenario states them (HBM from cluster.gpu.memory; 80 GB when unsaid).
FleetCovariates covariates_of(const Scenario& scenario);

}  // namespace ctwin::calib
