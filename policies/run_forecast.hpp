#pragma once
//! A running job's forecast from its own history (`ctwin live master --forecast`): how long the rest
//! of the run will take and what goodput it will end with, with the interval, narrowing as the job
//! learns its fleet.
//!
//! Each class's rate starts from the scenario's (its rate and its `rate_uncertainty`, as a Gamma:
//! the evidence's posterior, or a lognormal moment-matched) and is updated with the job's own
//! count over its own exposure (the job's nodes or GPUs times its wall time): a conjugate Gamma.
//! The rest of the run is then drawn: the rates from their posteriors, the interruptions from the
//! rates, each costing what the job's own ledger says an interruption has cost (its lost progress,
//! detection, diagnosis, restarts, restores and waits over its interruptions, weighed with the
//! scenario's expectation as one interruption's worth), and saves taking the share of wall time they
//! have taken. The same state gives the same forecast (the draws' seed is fixed).

#include <cstdint>
#include <map>
#include <string>

#include "core/ledger.hpp"
#include "models/scenario.hpp"

namespace ctwin {

//! What the job has done so far.
struct JobSoFar {
  double wall_s = 0;  //!< since it started (the live ledger's wall)
  Ledger ledger;      //!< where that wall went
  std::map<std::string, long> interruptions;  //!< by class, as the job's log names them
  int nodes = 0;                              //!< nodes in the job: its exposure is nodes x wall
  std::int64_t steps_done = 0;
  std::int64_t total_steps = 0;   //!< 0: the run's length is the scenario's horizon
  double checkpoint_interval_s = 0;  //!< compute between saves now; 0: the scenario's fixed one, else 30 min
};

struct RunForecast {
  double goodput_to_date = 0;
  long interruptions = 0;
  //! The posterior of the job's interruption rate, per day.
  double rate_per_day_p05 = 0, rate_per_day_p50 = 0, rate_per_day_p95 = 0;
  bool by_steps = false;  //!< the rest is the steps left (else the horizon's time left)
  double remaining_wall_s_p05 = 0, remaining_wall_s_p50 = 0, remaining_wall_s_p95 = 0;
  double final_goodput_p05 = 0, final_goodput_p50 = 0, final_goodput_p95 = 0;
  double cost_per_interruption_s = 0;  //!< what each is taken to cost (the job's own, with the scenario's)
  double checkpoint_share = 0;         //!< of wall time
  bool known = false;                  //!< false: no length to forecast (no steps left given, no horizon)
};

//! `draws` runs of the rest of the job, seeded by `seed`.
RunForecast forecast_run(const Scenario& scenario, const JobSoFar& so_far, std::uint64_t seed = 1, int draws = 4000);

}  // namespace ctwin
