#pragma once
//! What the health monitors report, before the supervisor stamps it into the event log
//! (docs/event-log.md): a `fault` that stops the job, a `slow_begin`/`slow_end` (clocks throttled),
//! or a `health` observation that is counted but stops nothing (corrected ECC, NVLink CRC errors).

#include <chrono>
#include <string>

namespace ctwin::live {

struct HealthEvent {
  std::chrono::steady_clock::time_point at;
  std::string kind;    //!< fault, health, slow_begin, slow_end
  int gpu = -1;
  int xid = -1;        //!< the Xid the fault is, or reads as (48 for an uncorrected ECC error)
  std::string detail;  //!< what was seen: "ecc_uncorrected=+1", "nvlink=3 down", "speed=0.62"
  std::string source;  //!< nvml, kernel-log
};

}  // namespace ctwin::live
