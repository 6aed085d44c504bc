#include "policies/health_policy.hpp"

namespace ctwin {

HealthJudgement judge_health(Symptom symptom, int reported_xid) {
  using R = HealthResponse;
  switch (symptom) {
    case Symptom::Xid: return {reported_xid == 63 ? R::ResetAtCheckpoint : R::Fault, reported_xid, true};
    case Symptom::GpuLost:
    case Symptom::MonitorStuck: return {R::Fault, 79, false};  // NVIDIA: fallen off the bus
    case Symptom::EccUncorrected: return {R::Fault, 48, true};  // a double-bit error
    case Symptom::RowRemapFailed: return {R::Fault, 64, true};
    case Symptom::NvlinkDown: return {R::Fault, 74, true};
    case Symptom::RowRemapPending: return {R::ResetAtCheckpoint, 63, true};  // the remap is applied at the next reset
    case Symptom::HotGpu: return {R::Warning, -1, true};
    case Symptom::Throttled: return {R::SlowBegin, -1, true};
    case Symptom::ThrottleCleared: return {R::SlowEnd, -1, true};
    case Symptom::EccCorrected:
    case Symptom::NvlinkErrors:
    case Symptom::Baseline: return {R::Observe, -1, true};
  }
  return {};
}

}  // namespace ctwin
