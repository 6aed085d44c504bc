#pragma once
//! Resolves a scenario into what one trial needs: checkpoint costs (given, or from the physical
//! model), the checkpoint policy's interval, and where the run ends.

#include <string>

#include "models/scenario.hpp"
#include "trial/trial.hpp"

namespace ctwin {

struct CheckpointCosts {
  Micros save_us = 0;
  Micros restore_us = 0;
  std::string source;  //!< "scenario" when given, "simgrid" when computed
};

TrialConfig make_trial_config(const Scenario& scenario, const CheckpointCosts& costs);

//! The job's mean time between interruptions that the fault rates imply: every class that stops
//! the job (crash, hang, SDC, a flap the watchdog catches, a network part that cuts a node out).
double implied_job_mtbf_s(const Scenario& scenario);

}  // namespace ctwin
