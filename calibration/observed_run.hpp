#pragma once
//! One run as its event log tells it (a `ctwin run --events` log or the live controller's): how
//! long it lasted, what interrupted it and, when the log closes with `ledger` rows, where its wall
//! time went. What `ctwin validate` holds a scenario's forecast against.

#include <array>
#include <map>
#include <optional>
#include <string>

#include "core/event_log.hpp"
#include "core/ledger.hpp"

namespace ctwin::calib {

struct ObservedRun {
  std::string file;
  double wall_s = 0;
  bool has_end = false;                           //!< else the run is taken to end at its last event
  std::map<std::string, long> interruptions;      //!< by the class the `interrupted` row names
  long unattributed_interruptions = 0;            //!< `interrupted` rows that name no class
  std::map<std::string, long> faults;             //!< `fault` rows by class
  std::optional<std::array<double, kCategoryCount>> ledger_s;  //!< from closing `ledger` rows, all present
  int highest_node = -1;
  std::string start;                              //!< a live log's `start` row: "utc=... host=..." (else empty)
  //! A live log's start-up: from its start row to its first `running` row (the rendezvous and the
  //! first launch, in the ledger's restart). The scenario's trials begin with the job running.
  double startup_s = 0;

  long total_interruptions() const;
};

//! Throws TraceUnreadable when the ledger rows are incomplete or do not add up to the wall time.
ObservedRun observe_run(const EventLog& log);

//! The run from the job's first `running` row on, as the scenario's trials see a job: the
//! start-up leaves the wall time and the ledger's restart (a log without one is unchanged).
ObservedRun without_startup(ObservedRun run);

}  // namespace ctwin::calib
