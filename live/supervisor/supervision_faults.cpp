// The supervisor's faults: health events (NVML, the kernel log), the master's answers and the
// actuators that carry them out, an interruption of the trainer and what it leaves behind
// (supervision.hpp). Every row of the job's log goes to the master (record).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "core/wall_clock.hpp"
#include "live/supervisor/supervision.hpp"

namespace ctwin::live {

// ---- health ----------------------------------------------------------------------------------------

const Supervision::RecentFault* Supervision::recent_fault(Clock::time_point t) const {
  for (auto it = recent_.rbegin(); it != recent_.rend(); ++it)
    if (seconds_between(it->at, t) < 30) return &*it;
  return nullptr;
}

void Supervision::take_health(bool may_interrupt) {
  std::vector<HealthEvent> events;
  if (watch_) events = watch_->take();
  if (tail_)
    for (auto& e : tail_->poll()) events.push_back(std::move(e));
  for (const auto& e : events)
    if (!finished_) on_health(e, may_interrupt);
}

void Supervision::on_health(const HealthEvent& e, bool may_interrupt) {
  const HealthJudgement judged = e.judged();
  ++health_counts_[response_label(judged.response)];
  const Clock::time_point at = std::min(e.at, Clock::now());
  const std::string seen = e.detail + " source=" + e.source;
  switch (judged.response) {
    case HealthResponse::SlowBegin: return record(at, EventKind::SlowBegin, seen, e.gpu, -1, {}, e.value);
    case HealthResponse::SlowEnd: return record(at, EventKind::SlowEnd, seen, e.gpu);
    case HealthResponse::Observe: return record(at, EventKind::Health, seen, e.gpu);
    case HealthResponse::Warning:
      record(at, EventKind::Health, seen, e.gpu);
      return checkpoint_now("after " + e.detail);
    case HealthResponse::ResetAtCheckpoint:
      record(at, EventKind::Health, seen, e.gpu, judged.xid);
      if (reset_due_) return;
      reset_due_.emplace(Cause{classify_stop(scenario_, LiveStop::RemapPending), e.gpu, judged.xid, seen}, false);
      // A save of this node alone is no step a job of more nodes can restore: the reset waits for
      // the job's next checkpoint. A node that is the whole job saves now.
      if (plan_.nnodes > 1) return record(at, EventKind::Health, "GPU reset scheduled at the job's next checkpoint", e.gpu, judged.xid);
      return checkpoint_now("for the GPU reset a row remap needs (" + e.detail + ")");
    case HealthResponse::Fault: break;
  }
  // NVML and the kernel log report the same Xid: one fault.
  for (const auto& r : recent_)
    if (r.xid == judged.xid && (r.gpu == e.gpu || r.gpu < 0 || e.gpu < 0) && seconds_between(r.at, e.at) < 10) return;
  recent_.push_back({e.at, judged.xid, e.gpu});
  while (recent_.size() > 64) recent_.pop_front();
  Cause cause{classify_xid(scenario_, judged.xid), e.gpu, judged.xid, seen, judged.trainer_can_save};
  if (!cause.fault.known)
    record(at, EventKind::Health,
           "Xid " + std::to_string(judged.xid) + " is in neither the scenario, the catalogue nor NVIDIA's Xid table: " + cause.fault.name +
               ", the GPU is reset (NVIDIA: collect nvidia-bug-report.sh for its support)",
           e.gpu, judged.xid);
  if (!may_interrupt || !trainer_->running()) return;  // the trainer's exit is this fault's interruption
  // Whether it stops the job is the master's question to the controller: the trainer runs on until
  // the answer (follow_answer), to the newest of the faults asked about.
  cause.ask = true;
  cause.struck = e.at;
  asked_.emplace(cause, ++asked_ids_);
  FaultReport report{cause.fault, cause.detail, cause.gpu, cause.xid, seconds_between(e.at, Clock::now()), -1, phase_ == Phase::Launching};
  report.ask = true;
  report.id = asked_ids_;
  coordination_->fault(report);
}

//! The master's answer to the health fault asked about: let pass within this generation (the
//! plan's checkpoint request follows it), or a new generation: this fault stops the trainer, which
//! saves first where it can, and its node follows the job as after any fault of its own.
void Supervision::follow_answer(const Plan& p) {
  if (p.generation <= generation_ && p.answered_fault < asked_->second) return;  // not answered yet
  Cause cause = asked_->first;
  asked_.reset();
  if (p.generation <= generation_) return;  // let pass: the job goes on
  std::cerr << "ctwin: interrupted: " << cause.fault.name << " " << cause.detail << "\n";
  ++interruptions_[cause.fault.name];
  stop_for(cause);
  own_fault_ = cause;  // a remediation named for this node is for its GPU
  if (await_run()) launch();
}

//! The metrics' label of a health response (ctwin_health_events_total{kind=...}).
const char* Supervision::response_label(HealthResponse r) {
  switch (r) {
    case HealthResponse::Fault: return "fault";
    case HealthResponse::SlowBegin: return "slow_begin";
    case HealthResponse::SlowEnd: return "slow_end";
    default: return "health";
  }
}

//! Asks the trainer to save after its current step (SIGUSR1): the work since the last checkpoint
//! is worth keeping before a likely failure.
void Supervision::checkpoint_now(const std::string& why) {
  if (!trainer_->running() || phase_ != Phase::Running) return;
  trainer_->signal(SIGUSR1);
  record(Clock::now(), EventKind::Health, "checkpoint requested " + why);
}

// ---- an interruption -------------------------------------------------------------------------------

void Supervision::interrupt(const Cause& cause, Clock::time_point t) {
  ++interruptions_[cause.fault.name];
  std::cerr << "ctwin: interrupted: " << cause.fault.name << " " << cause.detail << "\n";
  asked_.reset();  // a fault asked about and not yet answered ends with this one
  const bool launching = phase_ == Phase::Launching;
  // A launcher whose worker failed runs on while the master decides: an in-process restart keeps it
  // (its other ranks rejoin, it replaces the failed one); any other plan stops it (await_run).
  if (!(cause.worker_only && rejoins_ && trainer_->running())) stop_for(cause);
  own_fault_ = cause;  // the master decides for the job: one decision, every node restarts
  FaultReport report{cause.fault, cause.detail, cause.gpu, cause.xid, seconds_between(cause.struck.value_or(t), Clock::now()), cause.clean_step,
                     launching, -1, cause.silent};
  coordination_->fault(report);
  if (await_run()) launch();
}

//! Stopped by us: saving first where the scenario's checkpointing says so; a killed trainer's
//! snapshot goes to disk.
void Supervision::stop_for(const Cause& cause) {
  if (trainer_->running()) {
    const bool save = scenario_.checkpoint.save_on_failure && cause.trainer_can_save;
    trainer_->stop(save ? SIGTERM : SIGKILL, o_.stop_grace_s);
    for (const auto& line : trainer_->read_lines()) on_line(line, Clock::now());
  }
  persist_left_behind();
}

//! Returns whether this node leaves the job (the command ran and succeeded).
bool Supervision::carry_out(Act act, const Cause& cause) {
  const std::string* pattern = nullptr;
  EventKind kind = EventKind::ToRepair;
  switch (act) {
    case Act::ResetGpu: pattern = &o_.actuators.reset_gpu; break;
    case Act::Reboot: pattern = &o_.actuators.reboot; break;
    case Act::Replace: pattern = &o_.actuators.evict, kind = EventKind::Evicted; break;
    case Act::CheckpointNow: checkpoint_now("by the controller"); return false;
    default: return false;  // restart: the relaunch below; precheck: done
  }
  const ActuatorResult r = actuate(*pattern, o_.actuators, node_, host(), cause.gpu);
  record(Clock::now(), kind, (r.command.empty() ? "" : r.command + " ") + "(" + r.note + ")", cause.gpu, -1,
         cause.fault.name);
  std::cerr << "ctwin: " << to_string(kind) << ": " << (r.command.empty() ? "no command configured" : r.command) << " (" << r.note << ")\n";
  const bool left = r.ran && r.exit_code == 0 && act != Act::ResetGpu;
  evicted_ |= left && act == Act::Replace;
  return left;
}

//! The newest snapshot left in shared memory by a killed trainer goes to disk, in the background
//! (left_behind_persist.hpp).
void Supervision::persist_left_behind() {
  if (o_.persist_dir.empty()) return;
  finish_persist(true);
  left_behind_.start(o_.shm_dir, o_.flash_name, o_.persist_dir, rank_base(), o_.flash_ranks, world(), scenario_.elastic.shrink);
}

//! Logs the background persist's outcome once it is done (or, with `wait`, waits for it).
void Supervision::finish_persist(bool wait) {
  for (const auto& outcome : left_behind_.take(wait))
    record(Clock::now(), EventKind::Health, outcome.line);  // a node's own save, not the job's checkpoint
}

//! A finished run whose checkpoints are on disk leaves no shared memory behind.
void Supervision::release_slots() const {
  // The last persist failing (a full disk): the snapshots in memory are the only copy.
  if (!progress_.done || o_.persist_dir.empty() || !storage_failing_.empty()) return;
  std::error_code ignored;
  for (int rank = rank_base(); rank < rank_base() + o_.flash_ranks; ++rank)
    for (int slot = 0; slot < 2; ++slot) std::filesystem::remove(flash::SlotLocation{o_.shm_dir, o_.flash_name, rank}.path(slot), ignored);
}

NodeCheck Supervision::own_precheck(const PrecheckTask& task) {
  const auto began = Clock::now();
  const ActuatorCommands run_it{"", "", "", true, task.timeout_s};
  const ActuatorResult r = actuate(o_.precheck, run_it, node_, host(), -1);
  record(Clock::now(), EventKind::Health, "precheck " + r.note);
  if (r.exit_code == 3) std::cerr << "ctwin: the precheck cannot run here; restarting without it\n";
  NodeCheck check;
  check.key = task.key;
  check.passed = r.exit_code != 1;  // 1: it found a faulty or slow GPU here
  check.seconds = seconds_between(began, Clock::now());
  if (!check.passed) check.error = r.command + " (" + r.note + ")";
  return check;
}

std::string Supervision::host() const {
  if (!o_.host.empty()) return o_.host;
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace ctwin::live
