#pragma once
//! What the health monitors report: a typed symptom on a GPU, with what was seen. What it means
//! (a fault, a warning, a count, a slow span) is the health policy's call (policies/health_policy),
//! not the monitor's.

#include <chrono>
#include <string>

#include "policies/health_policy.hpp"

namespace ctwin::live {

struct HealthEvent {
  std::chrono::steady_clock::time_point at;
  Symptom symptom = Symptom::Xid;
  int gpu = -1;
  int xid = -1;        //!< Symptom::Xid: the code reported
  double value = 0;    //!< Symptom::Throttled: the SM clock's share of its maximum
  std::string detail;  //!< what was seen, for the log: "ecc_uncorrected=+1", "nvlink=3 down"
  std::string source;  //!< nvml, kernel-log
  HealthJudgement judged() const { return judge_health(symptom, xid); }
};

}  // namespace ctwin::live
