#pragma once
//! Slurm job records from `sacct --parsable2` (fields separated by "|", a header line first), e.g.
//!   sacct --allocations --parsable2 --format=JobID,State,Start,End,NNodes,NodeList,ExitCode
//! JobID, State, Start, End and NNodes are required; NodeList and ExitCode are read when present.
//! Job steps ("1234.batch", "1234.0") are skipped: the allocation is the job. "CANCELLED by 1000"
//! reads as CANCELLED; a job still running (End "Unknown") is skipped.

#include <string>
#include <vector>

#include "core/text_records.hpp"

namespace ctwin::calib {

struct SlurmJob {
  std::string id;
  std::string state;  //!< COMPLETED, FAILED, NODE_FAIL, TIMEOUT, PREEMPTED, CANCELLED, OUT_OF_MEMORY, ...
  double start_s = 0, end_s = 0;
  int nodes = 0;
  std::vector<std::string> node_list;  //!< expanded from Slurm's hostlist syntax
  std::string exit_code;
  int line = 0;
  //! The job ended because something broke, not because it finished, timed out or was stopped.
  bool failed() const { return state == "NODE_FAIL" || state == "FAILED" || state == "OUT_OF_MEMORY"; }
};

struct SlurmLog {
  std::vector<SlurmJob> jobs;
  ReadReport report;
};

SlurmLog read_sacct(std::istream& in, const std::string& file);
//! "gpu-[01-03,07],cpu1" -> gpu-01 gpu-02 gpu-03 gpu-07 cpu1 (zero padding kept). Empty on bad syntax.
//! Empty when the list is malformed or names more than `most` hosts (counted before expanding:
//! `gpu-[0-99999999]` in a tiny file must not take gigabytes).
std::vector<std::string> expand_hostlist(const std::string& list, std::size_t most = 1'000'000);

}  // namespace ctwin::calib
