#pragma once
//! A running job's forecast from its own history (`ctwin live master --forecast`): how long the rest
//! of the run will take and what goodput it will end with, with the interval, narrowing as the job
//! learns its fleet.
//!
//! The belief is the scenario's own: draws of its rates as `ctwin run` draws them (each class's
//! evidence or spread, its group's shared draw, the fleet factor), so the forecast before any data
//! is the scenario's, correlations included. The job's own counts over its own exposure (its nodes
//! or GPUs times its wall time) weigh each draw by their Poisson likelihood: the posterior, and a
//! fleet seen to fail often in its GPUs is believed to fail more in its hosts too. The rest of the
//! run is then drawn from that posterior: interruptions from the rates, each costing what the job's
//! own ledger says an interruption has cost (the scenario's expectation weighed as one), saves
//! taking the share of wall time they have. When the job's counts lie far outside every draw (the
//! belief was wrong), each class's rate comes from its own count alone, and the forecast says so.
//! The same state gives the same forecast.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
  double effective_draws = 0;          //!< of the belief's draws, after the job's counts weighed them
  bool belief_overruled = false;       //!< the job's counts fit no draw: each class from its own count
  bool known = false;                  //!< false: no length to forecast (no steps left given, no horizon)
};

class RunForecaster {
 public:
  //! Draws the scenario's rates `belief_draws` times (as a run's trials draw them, seeded by `seed`).
  explicit RunForecaster(const Scenario& scenario, int belief_draws = 20000, std::uint64_t seed = 1);
  //! `draws` runs of the rest of the job, seeded by `seed`.
  RunForecast forecast(const JobSoFar& so_far, std::uint64_t seed = 1, int draws = 4000) const;

 private:
  struct Interrupting {
    std::string name;
    double rate_per_s = 0;  //!< per component
    bool per_gpu = false;
    std::size_t index = 0;  //!< in the scenario's faults (the factors' order)
  };
  Scenario scenario_;
  std::vector<Interrupting> classes_;
  std::vector<std::vector<double>> factors_;  //!< per belief draw, per interrupting class
  double expected_recovery_s_ = 0;            //!< detection + diagnosis + action, by rate
  double expected_restart_s_ = 0;             //!< the restart's overhead by the path each class takes (restart_path.hpp), by rate
};

}  // namespace ctwin
