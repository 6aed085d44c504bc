#pragma once
//! What a node's health observations mean: the live agent's monitors (NVML, the kernel log)
//! report symptoms, typed; this policy says which stop the job (and as which Xid), which warn
//! that a failure may follow (save now), which are only counted, and which slow the job. No
//! decision is taken from the text of an observation.

#include <cstdint>

namespace ctwin {

enum class Symptom : std::uint8_t {
  Xid,              //!< an Xid, from NVML's events or the kernel log
  GpuLost,          //!< NVML: the GPU is lost (fallen off the bus)
  MonitorStuck,     //!< an NVML call that does not return: the driver is wedged
  EccUncorrected,   //!< volatile uncorrected (double-bit) ECC errors rose
  EccCorrected,     //!< corrected errors rose: routine
  RowRemapFailed,   //!< no spare row left
  RowRemapPending,  //!< a row remap waits for a GPU reset
  NvlinkDown,       //!< a link went down
  NvlinkErrors,     //!< replay, recovery or CRC counters rose
  Throttled,        //!< clocks held down for power, thermal or hardware slowdown
  ThrottleCleared,
  HotGpu,           //!< at or past the temperature limit
  Baseline,         //!< counters already high when watching began
};

enum class HealthResponse : std::uint8_t {
  Fault,      //!< the job stops: the class of `xid` says what follows
  Warning,    //!< a failure may follow: ask for a checkpoint now
  //! A row remap pending (Xid 63, NVML's remap-pending flag): the GPU needs a reset to apply it.
  //! Not a plain restart: a checkpoint now, and at that boundary the job stops for a GPU reset.
  ResetAtCheckpoint,
  Observe,    //!< counted and logged, nothing else
  SlowBegin,  //!< the GPU runs slow from now
  SlowEnd,
};

struct HealthJudgement {
  HealthResponse response = HealthResponse::Observe;
  int xid = -1;                 //!< Fault: the Xid the symptom is, or reads as (48 for an uncorrected ECC error)
  bool trainer_can_save = true; //!< false when the GPU is gone: asking the trainer to save would only wait
};

//! `reported_xid`: the code of an Xid symptom.
HealthJudgement judge_health(Symptom symptom, int reported_xid = -1);

}  // namespace ctwin
