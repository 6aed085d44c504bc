#include "live/supervisor/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "core/command_line.hpp"
#include "core/step_lines.hpp"
#include "core/wall_clock.hpp"
#include "live/supervisor/supervision.hpp"
#include "live/supervisor/worker_failures.hpp"

namespace ctwin::live {

std::atomic<bool>& supervisor_stop_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

void TrainerProgress::apply(const TrainerMessage& m) {
  using K = TrainerMessage::Kind;
  switch (m.kind) {
    case K::Restored:
    case K::Step: step = m.step; break;
    case K::Checkpoint: saved_step = m.step; break;
    case K::Nan: nan_step = m.step; break;
    case K::Stopped:
    case K::Done: done = m.kind == K::Done; break;
    default: break;
  }
}

Supervision::Supervision(const Scenario& scenario, const SupervisorOptions& o)
    : node_(o.node),
      coordination_(o.coordination),
      scenario_(scenario),
      o_(o),
      start_(Clock::now()),
      hang_(scenario.hang_detection ? scenario.hang_detection->factor : 5,
            o.hang_minimum_s ? *o.hang_minimum_s
                             : (scenario.hang_detection ? static_cast<double>(scenario.hang_detection->minimum_us) / 1e6 : 60)) {
  if (o.nvml) {
    std::string why;
    if (auto monitor = NvmlMonitor::open({}, why)) watch_ = std::make_unique<HealthWatch>(std::move(monitor), o.health_interval_s, o.nvml_stall_s);
    else std::cerr << "ctwin: no GPU health from NVML: " << why << "\n";
  }
  if (!o.kernel_log.empty()) tail_ = std::make_unique<KernelLogTail>(o.kernel_log, watch_ ? watch_->pci_bus_ids() : std::vector<std::string>{});
  if (o.metrics_port >= 0) {
    try {
      metrics_ = std::make_unique<LiveMetrics>(o.metrics_host, o.metrics_port, MetricsLabels{o.flash_name, std::to_string(o.node), host()});
      std::cerr << "ctwin: metrics on http://" << cli::host_port_text(o.metrics_host, metrics_->port()) << "/metrics\n";
    } catch (const std::exception& e) {
      std::cerr << "ctwin: warning: no metrics: " << e.what() << "\n";  // the run matters more than its metrics
    }
  }
}

// ---- the run ---------------------------------------------------------------------------------------

void Supervision::record(Clock::time_point t, EventKind kind, std::string note, int gpu, int code, const std::string& fault_class, double speed) {
  coordination_->event({kind, std::move(note), gpu, code, fault_class, speed, std::max(0.0, seconds_between(t, Clock::now()))});
}

SupervisorResult Supervision::run() {
  keep_standby();  // a spare too: it may take a rank
  if (!await_run()) return result_;
  launch();
  while (!finished_) {
    pollfd fds[3] = {{trainer_->heartbeat_fd(), POLLIN, 0}, {trainer_->stdout_fd(), POLLIN, 0}, {trainer_->stderr_fd(), POLLIN, 0}};
    ::poll(fds, 3, 50);
    take_messages();
    last_pass_ = Clock::now();
    if (const auto status = trainer_->poll_exit()) {
      take_messages();
      on_exit(*status, Clock::now());
      continue;
    }
    take_health();
    if (finished_) break;
    if (spike_onset_) {  // silent corruption from the spike's onset: its checkpoints are not clean
      Cause cause{classify_stop(scenario_, LiveStop::NanLoss), -1, -1, "loss_spike from step " + std::to_string(*spike_onset_), false};
      cause.clean_step = *spike_onset_ - 1;
      spike_onset_.reset();
      if (trainer_->running()) interrupt(cause, Clock::now());
    }
    if (reset_due_ && reset_due_->second) {  // the checkpoint the reset waited for is taken
      const Cause cause = reset_due_->first;
      reset_due_.reset();
      if (trainer_->running()) interrupt(cause, Clock::now());
    }
    check_hang(Clock::now());
    check_rejoin_alone(Clock::now());
    if (standby_due_ && Clock::now() >= *standby_due_) {
      standby_due_.reset();
      keep_standby();
    }
    finish_persist(false);
    if (!finished_ && supervisor_stop_flag()) stop_on_request();
    if (!finished_) follow_plan();
    publish_metrics(false);
  }
  publish_metrics(true);
  return result_;
}

// ---- the trainer -----------------------------------------------------------------------------------

WarmStandby::Environment Supervision::node_environment() {
  WarmStandby::Environment env = {{"CTWIN_FLASH_NAME", o_.flash_name}, {"CTWIN_SHM_DIR", o_.shm_dir}, {"CTWIN_NODE", std::to_string(node_)}};
  if (!o_.persist_dir.empty()) env.emplace_back("CTWIN_FLASH_PERSIST_DIR", o_.persist_dir);
  if (!cadence_) cadence_ = std::make_unique<CadenceFile>();
  env.emplace_back("CTWIN_CONTROL_FILE", cadence_->path());
  // An elastic job's replicas hold the same state: a step saved at another world size restores.
  if (scenario_.elastic.shrink) env.emplace_back("CTWIN_FLASH_REPLICATED", "1");
  return env;
}

void Supervision::keep_standby() {
  if (!o_.warm_standby) return;
  WarmStandby::Environment env = node_environment();
  if (!standby_) standby_ = std::make_unique<WarmStandby>(cadence_->folder());
  standby_->start(o_.trainer, std::move(env), o_.passive, o_.stop_grace_s);
}

bool Supervision::keeps_trainer(const Plan& p) {
  return p.in_process && rejoins_ && trainer_ && !trainer_->poll_exit();
}

bool Supervision::awaiting_rejoin_ready(const Plan& p) {
  for (const auto& line : trainer_->read_lines()) {  // only what says where each rank stands: the rest is the generation that ended
    const TrainerMessage m = parse_trainer_message(line);
    if (m.kind == TrainerMessage::Kind::Rejoining) ranks_rejoining_.insert(m.rank);
    if (m.kind == TrainerMessage::Kind::WorkerFailed) ranks_failed_.insert(m.rank);
  }
  int ready = 0;
  for (int rank = 0; rank < std::max(o_.flash_ranks, 1); ++rank) ready += ranks_rejoining_.count(rank) || ranks_failed_.count(rank);
  if (ready >= std::max(o_.flash_ranks, 1)) return false;
  const auto now = Clock::now();
  if (!stop_seen_) stop_seen_ = now;
  if (!InProcessRejoin::teardown_overdue(seconds_between(*stop_seen_, now))) return true;
  std::cerr << "ctwin: the trainer did not tear its collectives down within " << InProcessRejoin::kTeardownS << " s of generation " << p.generation
            << "'s stop: it is stopped, and launched anew\n";
  record(now, EventKind::Health, "in-process restart: the trainer did not rejoin in time; launched anew");
  rejoins_ = false;  // keeps_trainer() is false from here: the caller stops it
  return false;
}

NodeStatus Supervision::own_status(NodeState state) const {
  NodeStatus s{generation_, state, progress_.step, std::nullopt};
  s.launched = launched_;
  return s;
}

void Supervision::launch() {
  if (keeps_trainer(plan_)) return rejoin();
  WarmStandby::Environment env = node_environment();
  env.emplace_back("CTWIN_ATTEMPT", std::to_string(attempt_));
  std::vector<std::string> argv = o_.trainer;
  add_job_environment(plan_, env, argv);
  cadence_->publish(plan_.cadence, plan_.generation, plan_.restore_step);
  trainer_.reset();  // the last attempt's tree is gone before the next one starts
  rejoins_ = false;
  ranks_rejoining_.clear(), ranks_failed_.clear(), stop_seen_.reset(), rejoining_since_.reset();
  sections_ = SectionWindow();
  loss_watch_.restart();
  if (standby_)
    if ((trainer_ = standby_->hand_over(argv, env))) std::cerr << "ctwin: generation " << plan_.generation << " runs in the warm standby\n";
  if (!trainer_) trainer_ = std::make_unique<TrainerProcess>(argv, env, o_.passive, o_.stop_grace_s);
  progress_.launched();
  phase_ = Phase::Launching;
  last_message_ = last_pass_ = Clock::now();
}

void Supervision::rejoin() {
  trainer_->read_lines();  // the generation that ended: its last steps are not the new one's
  ranks_rejoining_.clear(), ranks_failed_.clear(), stop_seen_.reset(), rejoining_since_.reset();
  cadence_->publish(plan_.cadence, plan_.generation, plan_.restore_step);
  std::cerr << "ctwin: generation " << plan_.generation << " rejoins in process from step " << plan_.restore_step << "\n";
  sections_ = SectionWindow();
  loss_watch_.restart();
  progress_.launched();
  phase_ = Phase::Launching;
  last_message_ = last_pass_ = Clock::now();
}

void Supervision::take_messages() {
  for (const auto& line : trainer_->read_lines()) on_line(line, Clock::now());
  for (const auto& line : trainer_->read_output_lines()) on_output_line(line, Clock::now());
}

//! Passive mode: a step line of the trainer's output is the heartbeat it does not send. The
//! first one after a launch says where it resumed: a progress bar's first count (no rate yet) is
//! the step it starts from, a Megatron line reports a step just done.
void Supervision::on_output_line(const std::string& line, Clock::time_point t) {
  const auto s = parse_step_line(line);
  if (!s) return;
  if (phase_ == Phase::Launching) {
    const bool bar_at_start = !s->elapsed_said && s->seconds < 0;
    const long long resumed = bar_at_start ? s->step : s->step - 1;
    on_line("restored " + std::to_string(resumed > 0 ? resumed : -1) + (resumed > 0 ? " unknown" : " none") + " 0", t);
    if (bar_at_start) return;
  }
  if (s->step <= progress_.step) return;  // a bar redrawn at the same count
  const double seconds = s->seconds > 0 ? s->seconds : seconds_between(last_message_, t);
  char text[96];
  std::snprintf(text, sizeof text, "step %lld %.6f", s->step, seconds);
  on_line(text, t);
}

void Supervision::on_line(const std::string& line, Clock::time_point t) {
  const TrainerMessage m = parse_trainer_message(line);
  using K = TrainerMessage::Kind;
  if (m.kind == K::Unknown) return;  // a trainer may print more; only the protocol counts
  if (m.kind == K::Section) return on_section(m, t);
  if (m.kind == K::Persist) return on_persist(m, t);
  if (m.kind == K::WorkerFailed) return on_worker_failed(m, t);
  if (m.kind == K::InProcess) {
    rejoins_ |= m.rank == 0;
    return;
  }
  if (m.kind == K::Rejoining) {  // heard before the master's stop: awaiting_rejoin_ready() counts it
    ranks_rejoining_.insert(m.rank);
    if (!rejoining_since_) rejoining_since_ = t;
    return;
  }
  if (m.rank != 0 && m.kind != K::Nan) return;  // the node's rank 0 speaks for it (heartbeat.hpp)
  coordination_->trainer_line(line);
  // An interval is the trainer's pace only when this loop was there to hear it: lines queued while
  // the agent itself did not run (a paused VM, SIGSTOP, starved) arrive at once, and a gap learnt
  // from them would stretch the hang timeout for good.
  if (phase_ == Phase::Running && seconds_between(last_pass_, t) < 0.5) hang_.observe_interval(seconds_between(last_message_, t));
  last_message_ = t;
  progress_.apply(m);
  if (m.kind == K::Restored) {
    phase_ = Phase::Running;
    standby_due_ = t + std::chrono::seconds(1);  // the next launch's: its imports would slow this recovery's first steps
    // Node rank 0's restore is the job's (its book's `restore` row); the others' are the node's own
    // observations: `health` rows, which leave the job's phases alone.
    if (m.step >= 0 && plan_.node_rank > 0) {
      char text[160];
      std::snprintf(text, sizeof text, "restored source=%s step=%lld seconds=%.6f", m.source.c_str(), static_cast<long long>(m.step), m.seconds);
      record(t, EventKind::Health, text);
    }
  }
  if (m.kind == K::Step && m.loss && !spike_onset_)
    if (const auto onset = loss_watch_.observe(m.step, *m.loss)) spike_onset_ = *onset;
  if (m.kind == K::Checkpoint && reset_due_) reset_due_->second = true;
}

//! A rank's persist failing or writing again: a storage fault, never an interruption. It goes to the
//! master at once (its alert), and it is a sign of life: a trainer waiting at its end for a full
//! disk to take its last checkpoint says so every few seconds, and is not hung.
void Supervision::on_persist(const TrainerMessage& m, Clock::time_point t) {
  if (m.rank == 0) last_message_ = t;
  const std::string note = "local rank " + std::to_string(m.rank) + (m.persist_failed ? " cannot persist step " : " persists again, step ") +
                           std::to_string(m.step) + (m.persist_failed ? ": " + m.detail : std::string());
  if (m.persist_failed ? !storage_failing_.insert(m.rank).second : !storage_failing_.erase(m.rank)) return;  // said once a spell
  std::cerr << "ctwin: storage: " << note << "\n";
  coordination_->storage({m.rank, m.step, m.persist_failed, m.detail, 0.0});
}

void Supervision::on_worker_failed(const TrainerMessage& m, Clock::time_point t) {
  if (!trainer_->running()) return;  // read as it stopped: its exit is the interruption
  take_health(false);  // an Xid that came with the crash names its cause
  const int status = static_cast<int>(m.step);
  Cause cause{classify_stop(scenario_, LiveStop::Crash), -1, -1, "local rank " + std::to_string(m.rank) + ": " + TrainerProcess::describe(status)};
  if (const RecentFault* f = recent_fault(t)) cause = {classify_xid(scenario_, f->xid), f->gpu, f->xid, "after the Xid: " + cause.detail};
  if (const auto failed = first_worker_failure(trainer_->fault_dir())) {
    cause.detail += "; " + describe(*failed);
    cause.struck = when_said(failed->at);
  }
  cause.worker_only = true;
  ranks_failed_.insert(m.rank);
  interrupt(cause, t);
}

void Supervision::check_rejoin_alone(Clock::time_point t) {
  if (!rejoining_since_ || !InProcessRejoin::alone_too_long(seconds_between(*rejoining_since_, t)) || !trainer_->running()) return;
  const Clock::time_point left = *rejoining_since_;
  rejoining_since_.reset();
  std::string ranks;
  for (const int r : ranks_rejoining_) {
    if (!ranks.empty()) ranks += ',';
    ranks += std::to_string(r);
  }
  Cause cause{classify_stop(scenario_, LiveStop::Crash), -1, -1,
              "local rank " + ranks + " left its collectives (an error of its own, or a peer's no agent has reported) and no new generation came within " +
                  std::to_string(static_cast<int>(InProcessRejoin::kAloneS)) + " s"};
  cause.worker_only = true;  // its processes wait to rejoin: an in-process restart keeps them
  cause.struck = left;
  interrupt(cause, t);
}

//! Every rank's compute times, summed up for the master once a window (a median per rank).
void Supervision::on_section(const TrainerMessage& m, Clock::time_point t) {
  sections_.add(m.rank, m.group, m.seconds);
  if (seconds_between(sections_sent_, t) < o_.section_report_s) return;
  sections_sent_ = t;
  coordination_->sections(sections_.medians());
}

void Supervision::on_exit(int status, Clock::time_point t) {
  if (progress_.done || status == 0) {
    // The node waits for the job's end: a fault elsewhere at the last step restarts every node,
    // this one too (it restores its final checkpoint and is done again).
    if (await_run(NodeState::Finished)) launch();
    return;
  }
  take_health(false);  // an Xid that came with the crash names its cause
  Cause cause;
  if (progress_.nan_step >= 0) {
    cause = {classify_stop(scenario_, LiveStop::NanLoss), -1, -1, "nan_loss step=" + std::to_string(progress_.nan_step)};
  } else {
    if (const RecentFault* f = recent_fault(t)) cause = {classify_xid(scenario_, f->xid), f->gpu, f->xid, "after the Xid: " + TrainerProcess::describe(status)};
    else cause = {classify_stop(scenario_, LiveStop::Crash), -1, -1, TrainerProcess::describe(status)};
    // A launcher's exit code hides its worker's: the worker's own record says what failed, and when.
    if (const auto failed = first_worker_failure(trainer_->fault_dir())) {
      cause.detail += "; " + describe(*failed);
      cause.struck = when_said(failed->at);
    }
  }
  interrupt(cause, t);
}

Supervision::Clock::time_point Supervision::when_said(std::chrono::system_clock::time_point at) const {
  const auto now = Clock::now();
  return std::clamp(on_steady_clock(at), start_, now);  // a stamp from the future is now
}

void Supervision::check_hang(Clock::time_point t) {
  if (!trainer_->running() || rejoining_since_) return;  // waiting to rejoin, said so: check_rejoin_alone's
  const double silent = seconds_between(last_message_, t);
  // A trainer that said done is on its way out (the last persist, its collectives' teardown,
  // torchrun's exit barrier): it is silent by design, and gets the stop grace, not the hang timeout.
  const double limit = phase_ == Phase::Launching ? o_.startup_timeout_s
                       : progress_.done           ? std::max(hang_.timeout_s(), o_.stop_grace_s)
                                                  : hang_.timeout_s();
  if (silent <= limit) return;
  char detail[96];
  std::snprintf(detail, sizeof detail, "no heartbeat for %.3gs (timeout %.3gs)", silent, limit);
  Cause cause{classify_stop(scenario_, LiveStop::Hang), -1, -1, detail, trainer_can_save_after(LiveStop::Hang), last_message_};
  cause.silent = true;
  // Silent because a worker died and its launcher has not looked yet: a crash, dated by the worker.
  if (const auto failed = first_worker_failure(trainer_->fault_dir())) {
    cause = {classify_stop(scenario_, LiveStop::Crash), -1, -1, std::string(detail) + "; " + describe(*failed), true, when_said(failed->at)};
  }
  interrupt(cause, t);
}

// ---- the job master's plans ------------------------------------------------------------------------

std::optional<std::vector<std::int64_t>> Supervision::node_restorable() {
  if (o_.flash_ranks <= 0 || plan_.node_rank < 0) return std::nullopt;
  std::vector<std::string> refused;
  auto held = steps_every_rank_holds({o_.shm_dir, o_.flash_name, rank_base()}, o_.flash_ranks, o_.persist_dir, world(), scenario_.elastic.shrink,
                                     &refused);
  for (const auto& why : refused)
    if (said_refused_.insert(why).second) {
      std::cerr << "ctwin: " << why << "\n";
      record(Clock::now(), EventKind::Health, why);
    }
  return held;
}

//! Stopped: waits for the master's next `run` (true) or `exit` (false, finished). Meanwhile it
//! tells the master what this node can restore, and carries out the actions named for it.
bool Supervision::await_run(NodeState waiting) {
  // A killed trainer's snapshot still going to disk prunes the persist folder when it is done: the
  // steps this node offers are those that stay (the chaos soak saw a committed step pruned under it).
  finish_persist(true);
  for (;;) {
    const auto p = coordination_->plan();
    // A trainer kept for an in-process restart goes once a plan does not keep it (a relaunch decided),
    // or when its ranks have not all torn their collectives down in time.
    if (p && p->generation > generation_ && trainer_ && trainer_->running()) {
      if (keeps_trainer(*p) && awaiting_rejoin_ready(*p)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
      if (!keeps_trainer(*p)) {
        trainer_->kill_tree();
        persist_left_behind();
        finish_persist(true);
      }
    }
    if (p && p->node_rank >= 0) plan_.node_rank = p->node_rank, plan_.nnodes = std::max(p->nnodes, 1);
    // A node that finished generation G has not finished G+1: it is stopped for it and runs it too
    // (the chaos soak saw a job end on such stale `finished` states while two nodes had not relaunched).
    const NodeState state = p && p->generation > generation_ ? NodeState::Stopped : waiting;
    NodeStatus status{p ? p->generation : 0, state, progress_.step, node_restorable(), plan_.node_rank};
    if (p) status.problem = claim_persist_folder_for(*p);
    if (p && p->generation > acted_ && !p->actions.empty()) {  // once a generation
      bool leaves = false;
      acted_ = p->generation;
      for (const auto& name : p->actions) leaves |= carry_out_named(name);
      if (leaves) {
        finish(1, "the node was " + std::string(evicted_ ? "evicted" : "sent to repair") + ": the job goes on elsewhere");
        return false;
      }
    }
    if (p && p->what == PlanKind::Precheck && p->precheck && !o_.precheck.empty() && p->precheck->key != prechecked_) {
      prechecked_ = p->precheck->key;
      coordination_->precheck_done(own_precheck(*p->precheck));
      continue;
    }
    coordination_->status(status);
    if (p && p->what == PlanKind::Exit) {
      if (waiting == NodeState::Finished) release_slots();
      const std::string own = progress_.done ? "the trainer finished at step " + std::to_string(progress_.step) : "the trainer exited 0 without saying done";
      finish(p->exit_code, (waiting == NodeState::Finished && p->exit_code == 0 ? own + "; " : std::string()) + "the master ended the job: " + p->reason);
      return false;
    }
    if (p && p->what == PlanKind::Run && p->generation > generation_) {
      own_fault_.reset();
      asked_.reset();
      if (generation_ > 0) ++restarts_;
      plan_ = *p;
      generation_ = p->generation;
      attempt_ = static_cast<int>(std::min<std::int64_t>(generation_ - 1, 1'000'000));
      // In a job of more nodes the node is known by its rank; a job of one keeps the index it was
      // given (--node-index, Slurm's node id).
      if (plan_.nnodes > 1) node_ = plan_.node_rank;
      if (!p->reason.empty()) std::cerr << "ctwin: " << p->reason << "\n";  // why the restore is older than it might be
      // How it starts, said with the first running status (the master checks the restart row by it).
      launched_ = keeps_trainer(plan_) ? RestartPath::InProcess : standby_ && standby_->waiting() ? RestartPath::WarmStandby : RestartPath::Relaunch;
      coordination_->status(own_status(NodeState::Running));
      return true;
    }
    if (supervisor_stop_flag()) {
      finish(0, "stopped on request while waiting for the master");
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

const std::string& Supervision::claim_persist_folder_for(const Plan& p) {
  if (o_.persist_dir.empty() || p.run.empty() || p.run == claimed_run_ || !claim_problem_.empty()) return claim_problem_;
  claim_problem_ = claim_persist_folder(o_.persist_dir, p.run, p.adopt_steps);
  if (claim_problem_.empty()) claimed_run_ = p.run;
  else std::cerr << "ctwin: " << claim_problem_ << "\n";  // the master ends the job with it (NodeStatus::problem)
  return claim_problem_;
}

//! Running: reports this node's progress; when the master has moved the job on (a fault on
//! another node, or its own decision), the trainer's whole tree goes at once: its collectives
//! would only wait for the ranks that are gone.
void Supervision::follow_plan() {
  coordination_->status(own_status(progress_.done ? NodeState::Finished : NodeState::Running));
  const auto p = coordination_->plan();
  if (p && cadence_ && p->generation == generation_) cadence_->publish(p->cadence, generation_, plan_.restore_step);  // saves from a step ahead
  if (!p) return;
  if (p->incarnation != incarnation_) incarnation_ = p->incarnation, checkpoints_asked_ = 0;  // a master started again counts afresh
  if (p->checkpoint_requests > checkpoints_asked_) {
    checkpoints_asked_ = p->checkpoint_requests;
    checkpoint_now("by the master");
  }
  if (asked_) return follow_answer(*p);
  if (p->generation <= generation_) return;
  const auto failed = first_worker_failure(trainer_->fault_dir());
  if (keeps_trainer(*p)) {  // its ranks wait to rejoin; a worker of its own that failed is its launcher's to say
    if (await_run()) launch();
    return;
  }
  trainer_->kill_tree();
  if (failed) {  // a worker here had failed already: the master weighs it against the fault it heard of first, by their times
    const std::string detail = "a worker failed before the job stopped; " + describe(*failed);
    record(Clock::now(), EventKind::Health, detail);
    coordination_->fault({classify_stop(scenario_, LiveStop::Crash), detail, -1, -1, seconds_between(when_said(failed->at), Clock::now()), -1,
                          phase_ == Phase::Launching, generation_});
  }
  if (await_run()) launch();
}

//! An action the master asked for by name; the command is this node's own (dry-run by default).
bool Supervision::carry_out_named(const std::string& name) {
  const auto act = act_named(name, kRepairActions);
  if (!act) {
    record(Clock::now(), EventKind::Health, "the master asked for an unknown action: " + name);
    return false;
  }
  if (*act == Act::Restart) return false;
  Cause cause;  // the remediation of this node's own fault is for its GPU
  if (own_fault_) cause = *own_fault_;
  else cause.fault.name = plan_.cause, cause.detail = "asked by the master";
  return carry_out(*act, cause);
}

// ---- the end ---------------------------------------------------------------------------------------

void Supervision::stop_on_request() {
  trainer_->stop(SIGTERM, o_.stop_grace_s);
  for (const auto& line : trainer_->read_lines()) on_line(line, Clock::now());
  finish(0, "stopped on request after step " + std::to_string(progress_.step));
}

void Supervision::finish(int code, const std::string& reason) {
  finish_persist(true);  // the run waits for the crashed trainer's snapshot to reach the disk
  coordination_->status(own_status(code == 0 ? NodeState::Finished : NodeState::Stopped));
  result_.exit_code = code;
  result_.restarts = restarts_;
  result_.last_step = progress_.step;
  result_.wall_s = seconds_between(start_, Clock::now());
  result_.reason = reason;
  finished_ = true;
}

//! The metrics, for the exposer's own threads: at most every 200 ms, and at the end.
void Supervision::publish_metrics(bool now) {
  if (!metrics_) return;
  const auto t = Clock::now();
  if (!now && t - metrics_published_ < std::chrono::milliseconds(200)) return;
  metrics_published_ = t;
  // A job of one serves its job's ledger here (the master is in this process); an agent, its node's
  // readings only: the ledger is the master's.
  std::optional<MetricsSnapshot> job = coordination_->job_metrics();
  MetricsSnapshot s;
  s.with_ledger = job.has_value();
  if (job) s.ledger = job->ledger, s.uncharged_s = job->uncharged_s, s.rolled_back_us = job->rolled_back_us;
  s.wall_s = seconds_between(start_, t);
  s.step = progress_.step;
  s.checkpoint_step = progress_.saved_step;
  s.restarts = restarts_;
  s.trainer_up = trainer_ && trainer_->running();
  s.hang_timeout_s = hang_.timeout_s();
  s.interruptions = interruptions_;
  s.health_events = health_counts_;
  if (watch_) s.gpus = watch_->readings(), s.gpu_identities = watch_->identities();
  metrics_->publish(s);
}

SupervisorResult supervise(const Scenario& scenario, const SupervisorOptions& options) {
  if (!options.coordination) throw std::logic_error("supervise: no job master (a job of one has a LocalCoordination)");
  Supervision supervision(scenario, options);
  return supervision.run();
}

}  // namespace ctwin::live
