#pragma once
//! What the traces say, pooled across files before anything is fitted: per-class counts,
//! exposures and lifetimes, durations, per-node counts and Slurm jobs. One function per trace
//! kind adds to it (calibration/evidence_*.cpp).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/calibrate.hpp"
#include "core/event_log.hpp"
#include "calibration/readers/incident_table.hpp"
#include "calibration/readers/slurm_sacct.hpp"
#include "calibration/readers/step_log.hpp"
#include "calibration/readers/xid_log.hpp"
#include "models/scenario.hpp"

namespace ctwin::calib {

struct ClassEvidence {
  std::string component = "gpu";
  int xid = -1;
  double count = 0, exposure_hours = 0;
  std::vector<Life> lives;  //!< per component, in hours
  std::string effect;
  std::vector<std::string> provenance;
  //! For the trend test: fault times and the windows of exposure (per node or host), in one clock
  //! (`clock`: "run" for an event log's seconds from its start, "utc" for kernel logs'). A class
  //! seen on two clocks is not tested.
  std::vector<double> fault_times;
  std::vector<std::pair<double, double>> windows;
  std::string clock;
  bool clocks_mixed = false;
};

//! Adds a trace's fault times and windows of exposure to `c`'s trend evidence.
void add_trend_evidence(ClassEvidence& c, const std::string& clock, const std::vector<double>& times,
                        const std::vector<std::pair<double, double>>& windows);

struct Evidence {
  std::map<std::string, ClassEvidence> classes;
  ClassEvidence fleet;  //!< every class's faults together, for the fleet's trend test
  std::vector<double> repair_hours;    //!< a node sent to repair until it is back
  std::vector<double> recovery_hours;  //!< the job interrupted until it runs again
  //! A live job's restarts, from a job master's log (its start row names the job) that closes with
  //! its ledger: the ledger's restart less the start-up, and the `restart` rows by path (their
  //! `path=`; a relaunch where none is said). What a restart cost in that run, the warm-up of its
  //! first steps and a wait for a spare's rank included, as the ledger charges it.
  struct MeasuredRestarts {
    std::map<std::string, int> by_path;
    double seconds = 0;
    std::vector<std::string> provenance;
  } restarts;
  std::vector<Life> job_lives;         //!< time between the job's interruptions, in hours
  std::map<std::string, NodeCount> nodes;
  //! Row remaps in the kernel logs: each attempt is Xid 63 (remapped) or Xid 64 (failed: RMA).
  struct RowRemaps {
    double remapped = 0, failed = 0;
    std::vector<std::string> provenance;
  } row_remaps;
  std::vector<SlurmJob> jobs;
  std::vector<StepRecord> steps;
  std::vector<std::string> step_sources;
  nlohmann::ordered_json traces = nlohmann::ordered_json::array();
};

void add_event_log(Evidence& into, const EventLog& log, const Scenario& base);
//! Every kernel log together: a class's exposure is every host's window in all of them, whether
//! or not it shows the class. Each log's report goes into `into.traces` at its slot.
void add_xid_logs(Evidence& into, const std::vector<XidLog>& logs, const std::vector<std::size_t>& trace_slots, const Scenario* base,
                  const CalibrateOptions& options);
void add_sacct(Evidence& into, const SlurmLog& log);
void add_incidents(Evidence& into, const IncidentTable& table);

//! The read report as JSON: counts and the first malformed lines with their numbers.
nlohmann::ordered_json report_json(const ReadReport& report);

}  // namespace ctwin::calib
