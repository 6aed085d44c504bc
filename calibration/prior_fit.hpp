#pragma once
//! `ctwin prior`: the population prior (models/fleet_prior.hpp) fitted on public fleets' counts.
//!
//! The table (scenarios/sources/fleet_class_counts.csv) has a row per fleet and class group: a
//! count over the fleet's GPUs (or nodes) and days. A row may sum several groups (`hardware_total`:
//! GPU, GPU memory, network and host, for a fleet that publishes only that). The model's parameters
//! (each group's median rate, the HBM slope, the spread between fleets and between a fleet's
//! groups) get their posterior by Markov chain Monte Carlo over the fleets' latent factors: four
//! chains of Metropolis-within-Gibbs, with moves that rescale a spread with the factors it scales
//! (so a spread pinned by one large fleet still mixes), checked by split R-hat. Each fleet is then
//! held out in turn: fitted without it, where do its counts fall?

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/readers/fleet_table.hpp"
#include "models/fleet_prior.hpp"

namespace ctwin::calib {

struct PriorFitOptions {
  int chains = 4;
  int warmup = 4000;       //!< sweeps per chain that tune the steps, then are dropped
  int iterations = 20000;  //!< sweeps per chain kept (thinned to `keep` draws in all)
  int keep = 1000;
  std::uint64_t seed = 1;
  double sigma_prior_scale = 1;  //!< half-normal scale of both spreads
  double beta_prior_mean = 1, beta_prior_sd = 1;  //!< HBM slope: errors in proportion to bits, loosely
  bool holdouts = true;
};

struct PriorFit {
  PopulationPrior prior;
  nlohmann::ordered_json report;  //!< parameters, R-hat, fleets, hold-outs, a quarter's intervals
};

PriorFit fit_population_prior(const FleetTable& table, const std::string& name, const PriorFitOptions& options);
//! The prior file: the report with the draws (PopulationPrior::from_json reads it back).
nlohmann::ordered_json prior_document(const PriorFit& fit);
//! The report as text, for the terminal.
std::string prior_text(const nlohmann::ordered_json& report);

}  // namespace ctwin::calib
