// The job master's decision once every node has stopped (job_master.hpp): the fault that caused the
// generation's end, the controller's answer, the ledger's account of the interruption, whether the
// recovery goes in process (policies/restart_path.hpp), and the fallback from restores that fail.
#include <algorithm>
#include <iostream>

#include "live/job/job_master.hpp"
#include "live/job/recovery.hpp"
#include "policies/restart_path.hpp"

namespace ctwin::live {

//! One decision for the whole job: the earliest fault of the generation that ended is the cause,
//! the others (peers' collectives failing after it) its consequences.
void JobMaster::decide(Clock::time_point now) {
  decided_ = true;
  const auto report_interval = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.report_interval_s));
  const Fault* first = nullptr;
  for (const auto& f : faults_)
    if (f.generation == generation_ - 1 && (!first || f.at < first->at)) first = &f;
  // A hang is dated at its last sign of life; a failure elsewhere before it was found is the likelier
  // cause (the collective waited for the rank that died): the earliest such failure is blamed.
  const Fault* found_by_silence = first && first->report.silent ? first : nullptr;
  for (const auto& f : faults_)
    if (found_by_silence && f.generation == generation_ - 1 && !f.report.silent && f.at <= found_by_silence->learned &&
        (first == found_by_silence || f.at < first->at))
      first = &f;
  // A node whose agent went silent took its trainer's collectives with it: a peer's crash up to a
  // report interval after its last sign of life is the consequence, not the cause (the twin loop
  // blamed a peer's software bug when the trainer's death reached the master before the silence).
  for (const auto& f : faults_)
    if (first && !first->agent_silent && f.agent_silent && f.generation == generation_ - 1 && f.at <= first->at + report_interval)
      first = &f;
  std::vector<control::Action> actions;
  if (first) {
    cause_ = first->report.fault.name;
    for (const Act act : first->answer) actions.push_back({act, first->rank, 0, -1});  // asked already, as the fault came
    if (actions.empty()) actions = answer_fault(controller_, view(now), first->rank, first->report.fault, first->report.gpu, first->report.xid);
    answer_diagnosis(controller_, view(now), first->rank, actions);
  }
  if (first) {  // the ledger's account: the step in flight, detection, diagnosis
    const FaultReport& f = first->report;
    ledger_.charge(Category::LostProgress, std::min(first->at, detected_at_));
    log_.interruption(ledger_.marked(), log_node(first->rank), f.gpu, f.xid, f.fault, f.detail);
    ledger_.charge(Category::Detection, std::max(first->learned, detected_at_));
    record(ledger_.marked(), EventKind::Detected, {}, first->rank, f.xid, f.fault.name);
    ledger_.charge(Category::Diagnosis, now);
    record(ledger_.marked(), EventKind::Diagnosed, {}, first->rank, f.xid, f.fault.name);
    std::cerr << "ctwin master: generation " << first->generation << " interrupted: " << f.fault.name << " on node rank " << first->rank << " ("
              << f.detail << ")\n";
  }
  clean_bound_ = -1;  // silent corruption seen late: the restore goes no later than its onset
  for (const auto& f : faults_)
    if (f.generation == generation_ - 1 && f.report.clean_step >= 0)
      clean_bound_ = clean_bound_ < 0 ? f.report.clean_step : std::min(clean_bound_, f.report.clean_step);
  const int faulty_rank = first ? first->rank : -1;
  const bool first_failed_before_restoring = first && first->report.before_restoring;
  const std::string faulty_agent = first ? first->agent : std::string();
  in_process_ = in_process_ && recovery_in_process(actions);  // before the faults go
  std::erase_if(faults_, [&](const Fault& f) { return f.generation < generation_; });  // `first` with them
  for (const auto& a : actions) {
    if (a.act == Act::RunPrecheck && o_.prechecks) precheck_wanted_ = true;  // across nodes, once every node has stopped (job_precheck.cpp)
    if (a.node < 0 || a.node >= o_.nnodes) continue;
    Agent* held = agent_at(a.node);
    // The fault's node left already (lost, its rank given to a spare): the remediation was for it.
    if (held && a.node == faulty_rank && held->id != faulty_agent) held = nullptr;
    switch (a.act) {
      case Act::ResetGpu:
      case Act::Reboot:
        if (held) held->actions.push_back(to_string(a.act));
        break;
      case Act::Replace:
        if (held) replace(*held, "host=" + held->host);
        break;
      default: break;
    }
  }
  if (first_failed_before_restoring) fall_back_from_failed_restores();
  else if (faulty_rank >= 0) budget_.launch_ended(false);
  if (grow_by_ > 0) grow(now);
  fill_vacancies(now);
  if (const auto why = budget_.spent(); why && generation_ > 1) return finish(1, *why, now);  // it journals
  write_journal(now);  // the fault's rows with the decision: a master killed now resumes with both
}

RestartPath JobMaster::path_planned() const {
  // The warm standby is the agents' (--warm-standby): the policy's mechanism says they keep one;
  // whether they did, their first running status says (check_launches).
  return in_process_ ? RestartPath::InProcess : restart_path(scenario_.restart, false);
}

std::string JobMaster::path_said() const {
  const RestartPath path = path_planned();
  return path == RestartPath::Relaunch ? std::string() : std::string(" path=") + to_string(path);
}

void JobMaster::check_launches(Clock::time_point now) {
  // Every report passes here: the ranks are looked at only once as many nodes have said as there are ranks.
  if (phase_ != Phase::Running || generation_ <= 1 || launches_checked_ >= generation_ || launches_said_ < width()) return;
  RestartPath taken = RestartPath::InProcess;
  std::string cold;
  for (int r = 0; r < width(); ++r) {
    const std::string& id = slots_[static_cast<std::size_t>(r)];
    if (id.empty()) return;
    const Agent& a = agents_.at(id);
    if (a.launched_generation != generation_) return;  // not every node has said yet
    taken = slower(taken, a.launched);
    if (a.launched != path_planned()) cold += (cold.empty() ? "" : ",") + std::to_string(r);
  }
  launches_checked_ = generation_;
  if (taken == path_planned()) return;
  // calibrate takes this generation's restart as the path its nodes took (evidence_event_log.cpp).
  const std::string why = "launched generation=" + std::to_string(generation_) + " path=" + to_string(taken) + " planned=" +
                          to_string(path_planned()) + " node_ranks=" + cold;
  std::cerr << "ctwin master: generation " << generation_ << " restarted by " << to_string(taken) << ", not " << to_string(path_planned())
            << ": node ranks " << cold << " started otherwise\n";
  record(ledger_.at(now), EventKind::Health, why);
}

bool JobMaster::recovery_in_process(const std::vector<control::Action>& actions) const {
  for (const auto& f : faults_)
    if (f.generation == generation_ - 1 &&
        !in_process_takes(scenario_.restart, f.report.fault.name, f.report.fault.effect, f.report.fault.act, f.agent_silent))
      return false;
  // A reset, reboot, replacement or precheck needs the GPUs (or the node) free of the job's processes.
  return std::all_of(actions.begin(), actions.end(), [](const control::Action& a) { return a.act == Act::Restart || a.act == Act::None; });
}

//! The generation that ended failed before its trainers restored: a step that fails to restore twice
//! is given up for the next older one every rank holds, then scratch; three failures in a row from
//! one starting point end the job (the restart budget says why).
void JobMaster::fall_back_from_failed_restores() {
  budget_.launch_ended(true);
  if (restore_step_ < 0 || ++failed_restores_[restore_step_] < 2) return;
  refused_steps_.insert(restore_step_);
  budget_.launch_ended(false);  // a new starting point gets its own tries
  const std::string why = "step " + std::to_string(restore_step_) +
                          " failed to restore twice (the trainers failed before they restored it): the job goes back to an older step";
  std::cerr << "ctwin master: " << why << "\n";
  record(ledger_.marked(), EventKind::Health, why);
}

}  // namespace ctwin::live
