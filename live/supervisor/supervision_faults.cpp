// The supervisor's faults: health events (NVML, the kernel log), the controller's decisions and
// their actuators, an interruption of the trainer and what it leaves behind (supervision.hpp).
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
  const Micros at = std::max(ledger_.at(e.at), ledger_.marked());  // rows stay in time order
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
  for (const auto& a : answer(cause)) cause.answer.push_back(a.act);
  if (cause.answer.empty()) {  // the controller lets it pass
    record(at, EventKind::Health, cause.detail, e.gpu, judged.xid, cause.fault.name);  // counted, stops nothing
    checkpoint_now("after Xid " + std::to_string(judged.xid));
    return;
  }
  if (!may_interrupt || !trainer_->running()) return;  // the trainer's exit is this fault's interruption
  ledger_.charge(phase_ == Phase::Running ? Category::LostProgress : Category::Restart, e.at);
  interrupt(cause, Clock::now());
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
  record(ledger_.at(Clock::now()), EventKind::Health, "checkpoint requested " + why);
}

std::vector<control::Action> Supervision::answer(const Cause& cause) const {
  return answer_fault(controller_, view(), node_, cause.fault, cause.gpu, cause.xid);
}

control::ClusterView Supervision::view() const {
  control::ClusterView v;
  v.now_s = seconds_between(start_, Clock::now());
  v.job_nodes = std::max(plan_.nnodes, 1);
  return v;
}

// ---- an interruption -------------------------------------------------------------------------------

void Supervision::interrupt(const Cause& cause, Clock::time_point t) {
  const Micros at = ledger_.at(t);
  const int code = cause.xid >= 0 ? cause.xid : -1;
  log_.interruption(at, node_, cause.gpu, code, cause.fault, cause.detail);
  ++interruptions_[cause.fault.name];
  std::cerr << "ctwin: interrupted: " << cause.fault.name << " " << cause.detail << "\n";

  if (trainer_->running()) {  // stopped by us: saving first where the scenario's checkpointing says so
    const bool save = scenario_.checkpoint.save_on_failure && cause.trainer_can_save;
    trainer_->stop(save ? SIGTERM : SIGKILL, o_.stop_grace_s);
    for (const auto& line : trainer_->read_lines()) on_line(line, Clock::now());
    ledger_.charge(save ? Category::CheckpointSave : Category::Restart, Clock::now());
  }
  record(ledger_.marked(), EventKind::Detected, {}, cause.gpu, code, cause.fault.name);
  persist_left_behind();
  own_fault_ = cause;  // the master decides for the job: one decision, every node restarts
  own_fault_diagnosed_ = false;
  coordination_->fault({cause.fault, cause.detail, cause.gpu, cause.xid, seconds_between(cause.struck.value_or(t), Clock::now()), cause.clean_step,
                        phase_ == Phase::Launching, -1, cause.silent, cause.answer});
  if (await_run()) launch();
}

//! The master's plan moved past the stop for this node's fault: its diagnosis (the decision, and a
//! precheck when one ran) is over.
void Supervision::diagnosed() {
  if (!own_fault_ || own_fault_diagnosed_) return;  // once a fault (a plan may come many times)
  own_fault_diagnosed_ = true;
  ledger_.charge(Category::Diagnosis, Clock::now());
  record(ledger_.marked(), EventKind::Diagnosed, {}, own_fault_->gpu, own_fault_->xid >= 0 ? own_fault_->xid : -1, own_fault_->fault.name);
}

//! Returns whether this node leaves the job (the command ran and succeeded).
bool Supervision::carry_out(const control::Action& a, const Cause& cause) {
  const std::string* pattern = nullptr;
  EventKind kind = EventKind::ToRepair;
  switch (a.act) {
    case Act::ResetGpu: pattern = &o_.actuators.reset_gpu; break;
    case Act::Reboot: pattern = &o_.actuators.reboot; break;
    case Act::Replace: pattern = &o_.actuators.evict, kind = EventKind::Evicted; break;
    case Act::CheckpointNow: checkpoint_now("by the controller"); return false;
    default: return false;  // restart: the relaunch below; precheck: done
  }
  const ActuatorResult r = actuate(*pattern, o_.actuators, node_, host(), cause.gpu);
  record(ledger_.at(Clock::now()), kind, (r.command.empty() ? "" : r.command + " ") + "(" + r.note + ")", cause.gpu, -1,
         cause.fault.name);
  std::cerr << "ctwin: " << to_string(kind) << ": " << (r.command.empty() ? "no command configured" : r.command) << " (" << r.note << ")\n";
  const bool left = r.ran && r.exit_code == 0 && a.act != Act::ResetGpu;
  evicted_ |= left && a.act == Act::Replace;
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
  for (const auto& [failed, line] : left_behind_.take(wait))
    record(ledger_.at(Clock::now()), failed ? EventKind::Health : EventKind::CheckpointDone, line);
}

//! A finished run whose checkpoints are on disk leaves no shared memory behind.
void Supervision::release_slots() const {
  // The last persist failing (a full disk): the snapshots in memory are the only copy.
  if (!book_.done() || o_.persist_dir.empty() || !storage_failing_.empty()) return;
  std::error_code ignored;
  for (int rank = rank_base(); rank < rank_base() + o_.flash_ranks; ++rank)
    for (int slot = 0; slot < 2; ++slot) std::filesystem::remove(flash::SlotLocation{o_.shm_dir, o_.flash_name, rank}.path(slot), ignored);
}

NodeCheck Supervision::own_precheck(const PrecheckTask& task) {
  const auto began = Clock::now();
  const ActuatorCommands run_it{"", "", "", true, task.timeout_s};
  const ActuatorResult r = actuate(o_.precheck, run_it, node_, host(), -1);
  record(ledger_.at(Clock::now()), EventKind::Health, "precheck " + r.note);
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
