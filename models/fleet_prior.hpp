#pragma once
//! A population prior over fleets' fault rates, by class group, and one fleet's posterior under it
//! (docs/model.md, "What fleets say").
//!
//! In fleet f, group g's rate per component-day (GPU-days for the GPU groups, node-days else) is
//!
//!     log rate_fg = mu_g + beta * x_fg + u_f + e_fg,   u_f ~ N(0, sigma_fleet^2),  e_fg ~ N(0, sigma_group^2)
//!
//! with x_fg = log(HBM GB / 80) for GPU memory and 0 else. u_f is the fleet factor (a fleet is
//! better or worse as a whole), e_fg the group's own. The prior is a sample of (mu, beta,
//! sigma_fleet, sigma_group) from their posterior over the public fleets (`ctwin prior`,
//! calibration/prior_fit). A fleet's own counts and exposure make its posterior: in each draw the
//! fleet's (u, e) are sampled around their mode (a Laplace proposal, multivariate t) and weighted
//! by how well they explain the counts, so little exposure stays near the population and much
//! follows the fleet.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"

namespace ctwin {

//! What a fleet is like, where the data show it matters.
struct FleetCovariates {
  double hbm_gb = 80;  //!< each GPU's HBM capacity
};

//! One draw of the population's parameters.
struct PriorDraw {
  std::array<double, kClassGroups> mu{};  //!< log rate per component-day at the reference fleet
  double beta_hbm = 0;                    //!< GPU memory: log rate per log HBM capacity
  double sigma_fleet = 0, sigma_group = 0;
};

//! A prior file holds at most this many draws: each costs a mode search and its samples in a posterior.
inline constexpr std::size_t kMostPriorDraws = 100'000;

struct PopulationPrior {
  std::string name;  //!< e.g. "public-fleets-2026-11": a calibrated scenario records it
  std::string content_hash;  //!< of the file's bytes (as a scenario's): which prior exactly
  double hbm_reference_gb = 80;
  std::vector<PriorDraw> draws;

  //! A prior file (scenarios/priors/*.json, written by `ctwin prior`); ScenarioInvalid (exit 2)
  //! naming the file and the field when it is not one.
  static PopulationPrior read(const std::string& path);
  static PopulationPrior from_json(const nlohmann::json& doc, const std::string& file);
  //! The covariate term of group g for a fleet.
  double covariate(const PriorDraw& d, ClassGroup g, const FleetCovariates& x) const;
};

//! A fleet's own evidence for one group: faults over component-days (0 days: not observed).
struct GroupCount {
  double count = 0;
  double exposure_days = 0;
};
using FleetCounts = std::array<GroupCount, kClassGroups>;

//! One group's rate, as a fleet's posterior (or the prior predictive, with no evidence) holds it.
struct GroupRate {
  bool observed = false;
  double count = 0, exposure_days = 0;
  double median_per_day = 0;        //!< exp of the log rate's median: a scenario's rate
  double p05_per_day = 0, p95_per_day = 0;
  //! The log rate's spread as a scenario draws it (exp(fleet_sigma Z_fleet + own_sigma Z_group)):
  //! its 90% interval matched, split by how much of it the fleet factor carries.
  double fleet_sigma = 0, own_sigma = 0;
};

struct FleetPosterior {
  std::array<GroupRate, kClassGroups> groups;
  double fleet_factor_median = 1;           //!< exp(u): this fleet against the population's median fleet
  double fleet_factor_p05 = 1, fleet_factor_p95 = 1;
  double effective_samples = 0;             //!< of the importance sample (Kish): small means the fit is poor
  std::size_t samples = 0;
};

//! The fleet's posterior (the prior predictive when no group is observed). Deterministic: the
//! samples come from `seed`. Throws BadInput when no draw of the prior can hold the counts.
FleetPosterior fleet_posterior(const PopulationPrior& prior, const FleetCovariates& x, const FleetCounts& counts,
                               int samples_per_draw = 64, std::uint64_t seed = 1);

//! A fleet drawn from the population (for a benchmark's truth): each group's rate per component-day.
std::array<double, kClassGroups> draw_fleet_rates(const PopulationPrior& prior, const FleetCovariates& x, std::uint64_t seed);

}  // namespace ctwin
