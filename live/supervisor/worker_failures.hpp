#pragma once
//! What the trainer's workers say of their own failure. A launcher hides it: torchrun exits 1
//! whatever killed its worker (a SIGABRT reads `exit 1`), and notices a death only at its next
//! monitor pass, so the node that reports first need not be the node that failed first: a peer's
//! collective error can reach its master sooner than the abort that caused it.
//!
//! Under a supervisor each attempt has a folder ($CTWIN_FAULT_DIR). A worker using ctwin_flash
//! writes there, as it fails, a record of its own (rank-R.fatal: faulthandler's report of a fatal
//! signal; rank-R.error: an uncaught exception), stamped by the file system at the moment of the
//! failure. torchrun's own error file ($TORCHELASTIC_ERROR_FILE, the JSON of a worker decorated
//! with torch's @record, as DLRover and NVRx read it) lands there too. The earliest record names
//! the worker that failed first, by its own time, and what it said.

#include <chrono>
#include <optional>
#include <string>

namespace ctwin::live {

struct WorkerFailure {
  std::string rank;                             //!< the worker's global rank, as it named itself ("" when unknown)
  std::chrono::system_clock::time_point at;    //!< when it failed, by its own clock
  std::string what;                             //!< "Fatal Python error: Aborted at train.py:142 in main"
};

//! The file name of torchrun's error file in an attempt's folder.
inline constexpr const char* kTorchErrorFile = "torchelastic-error.json";

//! The earliest failure recorded in `folder`; nullopt when no worker left a record.
std::optional<WorkerFailure> first_worker_failure(const std::string& folder);

//! "rank 3 at 12:00:01.250: Fatal Python error: Aborted at train.py:142 in main".
std::string describe(const WorkerFailure& failure);

}  // namespace ctwin::live
