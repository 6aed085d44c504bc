#pragma once
//! Step-time logs, two formats:
//!  - a per-node CSV with a header naming at least `node` and `duration_s` (optionally `step`,
//!    `time_s`, and the node's `stage` and `role`, which say who its peers are): one row per node
//!    and step, as per-rank timers or the live controller give them;
//!  - Megatron-LM training logs: `iteration N/ M | ... | elapsed time per iteration (ms): X |`
//!    (also `X/Y`, the current and running mean). Job-wide, and each figure is the mean over the
//!    log interval, not one step. Other lines are skipped.

#include <string>
#include <vector>

#include "core/text_records.hpp"

namespace ctwin::calib {

struct StepRecord {
  std::string node;  //!< empty for a job-wide figure
  std::string peers; //!< the node's pipeline stage and role ("stage=3 role=expert"), when the log says
  long step = -1;
  double duration_s = 0;
  int line = 0;
};

struct StepLog {
  std::vector<StepRecord> records;
  ReadReport report;
};

StepLog read_step_csv(std::istream& in, const std::string& file);
StepLog read_megatron_log(std::istream& in, const std::string& file);

//! Whether a line is a Megatron-LM iteration line (what tells a trainer log from a kernel log).
bool is_megatron_line(const std::string& line);

}  // namespace ctwin::calib
