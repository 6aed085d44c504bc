#include "live/supervisor/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <deque>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>
#include <iostream>
#include <map>
#include <memory>

#include "live/checkpoint/flash_engine.hpp"
#include "live/health/health_watch.hpp"
#include "live/health/kernel_log_tail.hpp"
#include "live/supervisor/heartbeat.hpp"
#include "live/supervisor/job_launch.hpp"
#include "live/supervisor/left_behind_persist.hpp"
#include "live/supervisor/live_event_log.hpp"
#include "live/supervisor/live_ledger.hpp"
#include "live/supervisor/progress_book.hpp"
#include "core/step_lines.hpp"
#include "core/wall_clock.hpp"
#include "live/supervisor/live_metrics.hpp"
#include "live/supervisor/trainer_process.hpp"
#include "policies/fault_classes.hpp"
#include "policies/runtime_health.hpp"

namespace ctwin::live {

std::atomic<bool>& supervisor_stop_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

namespace {

using Clock = std::chrono::steady_clock;


struct Cause {
  LiveFaultClass fault;
  int gpu = -1, xid = -1;
  std::string detail;
  bool trainer_can_save = true;  //!< false for a hang or a lost GPU: asking it to save would only wait
  std::optional<Clock::time_point> struck = std::nullopt;  //!< when it struck, when known before it was seen (a hang: the last heartbeat)
  std::int64_t clean_step = -1;  //!< silent corruption seen late: the restore goes no later than this step
};

class Supervision {
 public:
  Supervision(const Scenario& scenario, const control::Controller& controller, const SupervisorOptions& o)
      : node_(o.node),
        coordination_(o.coordination),
        scenario_(scenario),
        controller_(controller),
        o_(o),
        start_(Clock::now()),
        ledger_(start_),
        log_(o.events_path),
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
        std::cerr << "ctwin: metrics on http://" << o.metrics_host << ":" << metrics_->port() << "/metrics\n";
      } catch (const std::exception& e) {
        std::cerr << "ctwin: warning: no metrics: " << e.what() << "\n";  // the run matters more than its metrics
      }
    }
  }

  ~Supervision() = default;
  Supervision(const Supervision&) = delete;
  Supervision& operator=(const Supervision&) = delete;

  SupervisorResult run() {
    record(0, EventKind::Start, "utc=" + utc_text(utc_now_us()) + " host=" + host());
    if (coordination_ && !await_run()) return result_;
    launch();
    while (!finished_) {
      pollfd fds[3] = {{trainer_->heartbeat_fd(), POLLIN, 0}, {trainer_->stdout_fd(), POLLIN, 0}, {trainer_->stderr_fd(), POLLIN, 0}};
      ::poll(fds, 3, 50);
      take_messages();
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
      finish_persist(false);
      if (!finished_ && supervisor_stop_flag()) stop_on_request();
      if (!finished_ && coordination_) follow_plan();
      publish_metrics(false);
      log_.flush();
    }
    publish_metrics(true);
    return result_;
  }

 private:
  // --- the trainer ---------------------------------------------------------------------------
  void launch() {
    std::vector<std::pair<std::string, std::string>> env = {
        {"CTWIN_ATTEMPT", std::to_string(attempt_)}, {"CTWIN_FLASH_NAME", o_.flash_name},
        {"CTWIN_SHM_DIR", o_.shm_dir},              {"CTWIN_NODE", std::to_string(node_)}};
    if (!o_.persist_dir.empty()) env.emplace_back("CTWIN_FLASH_PERSIST_DIR", o_.persist_dir);
    std::vector<std::string> argv = o_.trainer;
    if (coordination_) {
      add_job_environment(plan_, env, argv);
      if (!cadence_) cadence_ = std::make_unique<CadenceFile>();
      cadence_->publish(plan_.cadence);
      env.emplace_back("CTWIN_CONTROL_FILE", cadence_->path());
      // An elastic job's replicas hold the same state: a step saved at another world size restores.
      if (scenario_.elastic.shrink) env.emplace_back("CTWIN_FLASH_REPLICATED", "1");
    }
    trainer_.reset();  // the last attempt's tree is gone before the next one starts
    sections_ = SectionWindow();
    loss_watch_.restart();
    if (!coordination_ && restore_bound_ >= 0 && o_.flash_ranks > 0) {  // back to the newest clean step this node holds
      const auto held = steps_every_rank_holds({o_.shm_dir, o_.flash_name, 0}, o_.flash_ranks, o_.persist_dir, o_.flash_ranks);
      const std::int64_t clean = newest_at_most(held, restore_bound_);
      if (clean < 0 && !held.empty()) {  // every kept step is past the onset: the work is gone
        const std::string why = no_clean_step_text(restore_bound_, held);
        std::cerr << "ctwin: " << why << "\n";
        record(ledger_.at(Clock::now()), EventKind::Health, why);
      }
      env.emplace_back("CTWIN_RESTORE_STEP", std::to_string(clean));
      restore_bound_ = -1;
    }
    trainer_ = std::make_unique<TrainerProcess>(argv, env, o_.passive);
    book_.launched();
    phase_ = Phase::Launching;
    last_message_ = Clock::now();
  }

  void take_messages() {
    for (const auto& line : trainer_->read_lines()) on_line(line, Clock::now());
    for (const auto& line : trainer_->read_output_lines()) on_output_line(line, Clock::now());
  }

  //! Passive mode: a step line of the trainer's output is the heartbeat it does not send. The
  //! first one after a launch says where it resumed: a progress bar's first count (no rate yet) is
  //! the step it starts from, a Megatron line reports a step just done.
  void on_output_line(const std::string& line, Clock::time_point t) {
    const auto s = parse_step_line(line);
    if (!s) return;
    if (phase_ == Phase::Launching) {
      const bool bar_at_start = !s->elapsed_said && s->seconds < 0;
      const long long resumed = bar_at_start ? s->step : s->step - 1;
      on_line("restored " + std::to_string(resumed > 0 ? resumed : -1) + (resumed > 0 ? " unknown" : " none") + " 0", t);
      if (bar_at_start) return;
    }
    if (s->step <= book_.step()) return;  // a bar redrawn at the same count
    const double seconds = s->seconds > 0 ? s->seconds : seconds_between(last_message_, t);
    char text[96];
    std::snprintf(text, sizeof text, "step %lld %.6f", s->step, seconds);
    on_line(text, t);
  }

  void on_line(const std::string& line, Clock::time_point t) {
    const TrainerMessage m = parse_trainer_message(line);
    using K = TrainerMessage::Kind;
    if (m.kind == K::Unknown) return;  // a trainer may print more; only the protocol counts
    if (m.kind == K::Section) return on_section(m, t);
    if (m.rank != 0 && m.kind != K::Nan) return;  // the node's rank 0 speaks for it (heartbeat.hpp)
    if (coordination_) coordination_->trainer_line(line);
    if (phase_ == Phase::Running) hang_.observe_interval(seconds_between(last_message_, t));
    last_message_ = t;
    book_.apply(m, t);
    if (m.kind == K::Restored) phase_ = Phase::Running;
    if (m.kind == K::Step && m.loss && !spike_onset_)
      if (const auto onset = loss_watch_.observe(m.step, *m.loss)) spike_onset_ = *onset;
    if (m.kind == K::Checkpoint && reset_due_) reset_due_->second = true;
  }

  //! Every rank's compute times, summed up for the master once a window (a median per rank).
  void on_section(const TrainerMessage& m, Clock::time_point t) {
    if (!coordination_) return;  // alone, there is no one to compare with but the node's own ranks
    sections_.add(m.rank, m.group, m.seconds);
    if (seconds_between(sections_sent_, t) < o_.section_report_s) return;
    sections_sent_ = t;
    coordination_->sections(sections_.medians());
  }

  void on_exit(int status, Clock::time_point t) {
    if (book_.done() || status == 0) {
      ledger_.charge(book_.done() ? Category::CheckpointSave : Category::Productive, t);
      // Under a master the node waits for the job's end: a fault elsewhere at the last step
      // restarts every node, this one too (it restores its final checkpoint and is done again).
      if (coordination_) {
        if (await_run(NodeState::Finished)) launch();
        return;
      }
      release_slots();
      finish(0, book_.done() ? "the trainer finished at step " + std::to_string(book_.step()) : "the trainer exited 0 without saying done");
      return;
    }
    ledger_.charge(phase_ == Phase::Running ? Category::LostProgress : Category::Restart, t);  // the step in flight
    failed_launches_ = phase_ == Phase::Launching ? failed_launches_ + 1 : 0;
    take_health(false);  // an Xid that came with the crash names its cause
    Cause cause;
    if (book_.nan_step() >= 0) {
      cause = {classify_stop(scenario_, LiveStop::NanLoss), -1, -1, "nan_loss step=" + std::to_string(book_.nan_step())};
    } else if (const RecentFault* f = recent_fault(t)) {
      cause = {classify_xid(scenario_, f->xid), f->gpu, f->xid, "after the Xid: " + TrainerProcess::describe(status)};
    } else {
      cause = {classify_stop(scenario_, LiveStop::Crash), -1, -1, TrainerProcess::describe(status)};
    }
    interrupt(cause, t);
  }

  void check_hang(Clock::time_point t) {
    if (!trainer_->running()) return;
    const double silent = seconds_between(last_message_, t);
    // A trainer that said done is on its way out (the last persist, its collectives' teardown,
    // torchrun's exit barrier): it is silent by design, and gets the stop grace, not the hang timeout.
    const double limit = phase_ == Phase::Launching ? o_.startup_timeout_s
                         : book_.done()             ? std::max(hang_.timeout_s(), o_.stop_grace_s)
                                                    : hang_.timeout_s();
    if (silent <= limit) return;
    ledger_.charge(Category::Detection, t);
    char detail[96];
    std::snprintf(detail, sizeof detail, "no heartbeat for %.3gs (timeout %.3gs)", silent, limit);
    Cause cause{classify_stop(scenario_, LiveStop::Hang), -1, -1, detail, trainer_can_save_after(LiveStop::Hang), last_message_};
    interrupt(cause, t);
  }

  // --- under a job master ------------------------------------------------------------------
  //! The first global rank of this node's trainer ranks, and the job's ranks (flash slot names).
  int rank_base() const { return coordination_ ? std::max(plan_.node_rank, 0) * o_.flash_ranks : 0; }
  int world() const { return coordination_ ? std::max(plan_.nnodes, 1) * o_.flash_ranks : o_.flash_ranks; }

  std::optional<std::vector<std::int64_t>> node_restorable() const {
    if (o_.flash_ranks <= 0 || plan_.node_rank < 0) return std::nullopt;
    return steps_every_rank_holds({o_.shm_dir, o_.flash_name, rank_base()}, o_.flash_ranks, o_.persist_dir, world(), scenario_.elastic.shrink);
  }

  //! Stopped: waits for the master's next `run` (true) or `exit` (false, finished). Meanwhile it
  //! tells the master what this node can restore, and carries out the actions named for it.
  bool await_run(NodeState waiting = NodeState::Stopped) {
    std::int64_t acted = -1;
    for (;;) {
      const auto p = coordination_->plan();
      if (p && p->node_rank >= 0) plan_.node_rank = p->node_rank, plan_.nnodes = std::max(p->nnodes, 1);
      NodeStatus status{p ? p->generation : 0, waiting, book_.step(), node_restorable(), plan_.node_rank};
      if (p && p->generation > acted && !p->actions.empty()) {
        for (const auto& name : p->actions) carry_out_named(name);
        acted = p->generation;
      }
      coordination_->status(status);
      if (p && p->what == PlanKind::Exit) {
        ledger_.charge(Category::Restart, Clock::now());
        if (waiting == NodeState::Finished) release_slots();
        finish(p->exit_code, "the master ended the job: " + p->reason);
        return false;
      }
      if (p && p->what == PlanKind::Run && p->generation > generation_) {
        ledger_.charge(Category::Restart, Clock::now());
        if (generation_ > 0) {
          ++restarts_;
          record(ledger_.marked(), EventKind::RestartBegin, "generation=" + std::to_string(p->generation), -1, -1, p->cause);
        }
        plan_ = *p;
        generation_ = p->generation;
        attempt_ = static_cast<int>(std::min<std::int64_t>(generation_ - 1, 1'000'000));
        node_ = plan_.node_rank;
        coordination_->status({generation_, NodeState::Running, book_.step(), std::nullopt});
        return true;
      }
      if (supervisor_stop_flag()) {
        ledger_.charge(Category::Restart, Clock::now());
        finish(0, "stopped on request while waiting for the master");
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  //! Running: reports this node's progress; when the master has moved the job on (a fault on
  //! another node, or its own decision), the trainer's whole tree goes at once: its collectives
  //! would only wait for the ranks that are gone.
  void follow_plan() {
    coordination_->status({generation_, book_.done() ? NodeState::Finished : NodeState::Running, book_.step(), std::nullopt});
    const auto p = coordination_->plan();
    if (p && cadence_ && p->generation == generation_) cadence_->publish(p->cadence);  // saves from a step ahead
    if (!p || p->generation <= generation_) return;
    const auto t = Clock::now();
    ledger_.charge(phase_ == Phase::Running ? Category::LostProgress : Category::Restart, t);
    record(ledger_.at(t), EventKind::Interrupted, "by the master: " + p->reason, -1, -1, p->cause);
    trainer_->kill_tree();
    ledger_.charge(Category::Restart, Clock::now());
    if (await_run()) launch();
  }

  //! An action the master asked for by name; the command is this node's own (dry-run by default).
  void carry_out_named(const std::string& name) {
    const auto act = act_named(name, kRepairActions);
    if (!act) {
      record(ledger_.at(Clock::now()), EventKind::Health, "the master asked for an unknown action: " + name);
      return;
    }
    if (*act == Act::Restart) return;
    Cause cause;
    cause.fault.name = plan_.cause;
    cause.detail = "asked by the master";
    carry_out({*act, node_, 0, -1}, cause);
  }

  // --- health --------------------------------------------------------------------------------
  struct RecentFault {
    Clock::time_point at;
    int xid, gpu;
  };
  const RecentFault* recent_fault(Clock::time_point t) const {
    for (auto it = recent_.rbegin(); it != recent_.rend(); ++it)
      if (seconds_between(it->at, t) < 30) return &*it;
    return nullptr;
  }

  void take_health(bool may_interrupt = true) {
    std::vector<HealthEvent> events;
    if (watch_) events = watch_->take();
    if (tail_)
      for (auto& e : tail_->poll()) events.push_back(std::move(e));
    for (const auto& e : events)
      if (!finished_) on_health(e, may_interrupt);
  }

  void on_health(const HealthEvent& e, bool may_interrupt) {
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
        // Alone, the node is the job: it saves now. Under a master, a save of this node alone is no
        // step the job can restore: the reset waits for the job's next checkpoint.
        if (coordination_) return record(at, EventKind::Health, "GPU reset scheduled at the job's next checkpoint", e.gpu, judged.xid);
        return checkpoint_now("for the GPU reset a row remap needs (" + e.detail + ")");
      case HealthResponse::Fault: break;
    }
    // NVML and the kernel log report the same Xid: one fault.
    for (const auto& r : recent_)
      if (r.xid == judged.xid && (r.gpu == e.gpu || r.gpu < 0 || e.gpu < 0) && seconds_between(r.at, e.at) < 10) return;
    recent_.push_back({e.at, judged.xid, e.gpu});
    while (recent_.size() > 64) recent_.pop_front();
    const Cause cause{classify_xid(scenario_, judged.xid), e.gpu, judged.xid, seen, judged.trainer_can_save};
    if (!cause.fault.known)
      record(at, EventKind::Health,
             "Xid " + std::to_string(judged.xid) + " is in neither the scenario, the catalogue nor NVIDIA's Xid table: " + cause.fault.name +
                 ", the GPU is reset (NVIDIA: collect nvidia-bug-report.sh for its support)",
             e.gpu, judged.xid);
    if (decide(cause).empty()) {
      record(at, EventKind::Health, cause.detail, e.gpu, judged.xid, cause.fault.name);  // counted, stops nothing
      checkpoint_now("after Xid " + std::to_string(judged.xid));
      return;
    }
    if (!may_interrupt || !trainer_->running()) return;  // the trainer's exit is this fault's interruption
    ledger_.charge(phase_ == Phase::Running ? Category::LostProgress : Category::Restart, e.at);
    interrupt(cause, Clock::now());
  }

  //! The metrics' label of a health response (ctwin_health_events_total{kind=...}).
  static const char* response_label(HealthResponse r) {
    switch (r) {
      case HealthResponse::Fault: return "fault";
      case HealthResponse::SlowBegin: return "slow_begin";
      case HealthResponse::SlowEnd: return "slow_end";
      default: return "health";
    }
  }

  //! A row of the event log about this node; `fault_class`: the class it concerns (empty: none).
  void record(Micros at, EventKind kind, std::string_view note = {}, int gpu = -1, int code = -1, const std::string& fault_class = {},
              double speed = 1.0) {
    RunEvent event;
    event.time = at;
    event.node = node_;
    event.gpu = gpu;
    event.kind = kind;
    event.code = code;
    if (!fault_class.empty()) event.fault_class = log_.class_index(fault_class);
    event.speed = speed;
    log_.add(event, note);
  }

  //! Asks the trainer to save after its current step (SIGUSR1): the work since the last checkpoint
  //! is worth keeping before a likely failure.
  void checkpoint_now(const std::string& why) {
    if (!trainer_->running() || phase_ != Phase::Running) return;
    trainer_->signal(SIGUSR1);
    record(ledger_.at(Clock::now()), EventKind::Health, "checkpoint requested " + why);
  }

  //! The controller's actions for a fault; empty when it says to carry on.
  std::vector<control::Action> decide(const Cause& cause) const {
    control::Event event;
    event.time_s = seconds_between(start_, Clock::now());
    event.node = node_;
    event.gpu = cause.gpu;
    event.xid = cause.xid;
    event.proposed = {cause.fault.act, node_, 0, -1};
    std::vector<control::Action> actions;
    controller_.decide(event, view(), actions);
    std::erase_if(actions, [](const control::Action& a) { return a.act == Act::None; });
    return actions;
  }

  control::ClusterView view() const {
    control::ClusterView v;
    v.now_s = seconds_between(start_, Clock::now());
    v.job_nodes = 1;
    return v;
  }

  // --- an interruption -----------------------------------------------------------------------
  void interrupt(const Cause& cause, Clock::time_point t) {
    if (cause.clean_step >= 0) restore_bound_ = cause.clean_step;
    const Micros at = ledger_.at(t);
    const int code = cause.xid >= 0 ? cause.xid : -1;
    record(at, EventKind::Fault, cause.detail, cause.gpu, code, cause.fault.name);
    record(at, EventKind::Interrupted, {}, cause.gpu, code, cause.fault.name);
    if (cause.fault.rolls_back()) record(at, EventKind::Rollback, {}, -1, -1, cause.fault.name);
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
    if (coordination_) {  // the master decides for the job: one decision, every node restarts
      coordination_->fault(
          {cause.fault.name, cause.detail, cause.gpu, cause.xid, seconds_between(cause.struck.value_or(t), Clock::now()), cause.clean_step});
      if (await_run()) launch();
      return;
    }

    std::vector<control::Action> actions = decide(cause);
    control::Event diagnosing;
    diagnosing.signal = control::Signal::Diagnosing;
    diagnosing.node = node_;
    controller_.decide(diagnosing, view(), actions);
    for (const auto& a : std::vector<control::Action>(actions))
      if (a.act == Act::RunPrecheck && !precheck_passes()) actions.push_back({Act::Replace, node_, 0, -1});
    ledger_.charge(Category::Diagnosis, Clock::now());
    record(ledger_.marked(), EventKind::Diagnosed, {}, cause.gpu, code, cause.fault.name);

    bool node_leaves = false;
    for (const auto& a : actions) node_leaves |= carry_out(a, cause);
    ledger_.charge(Category::Restart, Clock::now());
    if (node_leaves) return finish(1, "the node was " + std::string(evicted_ ? "evicted" : "sent to repair") + ": the job goes on elsewhere");
    if (restarts_ >= o_.max_restarts) return finish(1, "gave up after " + std::to_string(restarts_) + " restarts");
    if (failed_launches_ >= 3)
      return finish(1, "gave up: the trainer failed 3 times in a row before it restored (check its command and its log)");
    ++restarts_;
    ++attempt_;
    record(ledger_.marked(), EventKind::RestartBegin, {}, -1, -1, cause.fault.name);
    launch();
  }

  //! Returns whether this node leaves the job (the command ran and succeeded).
  bool carry_out(const control::Action& a, const Cause& cause) {
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
  void persist_left_behind() {
    if (o_.persist_dir.empty()) return;
    finish_persist(true);
    left_behind_.start(o_.shm_dir, o_.flash_name, o_.persist_dir, rank_base(), o_.flash_ranks, world(), scenario_.elastic.shrink);
  }

  //! Logs the background persist's outcome once it is done (or, with `wait`, waits for it).
  void finish_persist(bool wait) {
    for (const auto& [failed, line] : left_behind_.take(wait))
      record(ledger_.at(Clock::now()), failed ? EventKind::Health : EventKind::CheckpointDone, line);
  }

  //! A finished run whose checkpoints are on disk leaves no shared memory behind.
  void release_slots() const {
    if (!book_.done() || o_.persist_dir.empty()) return;
    std::error_code ignored;
    for (int rank = rank_base(); rank < rank_base() + o_.flash_ranks; ++rank)
      for (int slot = 0; slot < 2; ++slot) std::filesystem::remove(flash::SlotLocation{o_.shm_dir, o_.flash_name, rank}.path(slot), ignored);
  }

  bool precheck_passes() {
    if (o_.precheck.empty()) return true;
    const ActuatorCommands run_it{"", "", "", true, 1800};
    const ActuatorResult r = actuate(o_.precheck, run_it, node_, host(), -1);
    record(ledger_.at(Clock::now()), EventKind::Health, "precheck " + r.note);
    if (r.exit_code == 3) std::cerr << "ctwin: the precheck cannot run here; restarting without it\n";
    return r.exit_code != 1;  // 1: it found a faulty or slow GPU here
  }

  std::string host() const {
    if (!o_.host.empty()) return o_.host;
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
  }

  // --- the end -------------------------------------------------------------------------------
  void stop_on_request() {
    trainer_->stop(SIGTERM, o_.stop_grace_s);
    for (const auto& line : trainer_->read_lines()) on_line(line, Clock::now());
    ledger_.charge(Category::CheckpointSave, Clock::now());
    finish(0, "stopped on request after step " + std::to_string(book_.step()));
  }

  void finish(int code, const std::string& reason) {
    if (left_behind_.running()) {  // the run waits for the crashed trainer's snapshot to reach the disk
      finish_persist(true);
      ledger_.charge(Category::CheckpointSave, Clock::now());
    }
    ledger_.charge(Category::Restart, Clock::now());  // whatever is left: tearing down
    const Micros wall = ledger_.marked();
    log_.close(wall, ledger_.ledger());
    if (coordination_) coordination_->status({generation_, code == 0 ? NodeState::Finished : NodeState::Stopped, book_.step(), std::nullopt});
    result_.exit_code = code;
    result_.restarts = restarts_;
    result_.last_step = book_.step();
    result_.wall_s = static_cast<double>(wall) / 1e6;
    result_.productive_s = static_cast<double>(ledger_.ledger()[Category::Productive]) / 1e6;
    result_.reason = reason;
    finished_ = true;
  }

  //! The metrics, for the exposer's own threads: at most every 200 ms, and at the end.
  void publish_metrics(bool now) {
    if (!metrics_) return;
    const auto t = Clock::now();
    if (!now && t - metrics_published_ < std::chrono::milliseconds(200)) return;
    metrics_published_ = t;
    MetricsSnapshot s;
    s.ledger = ledger_.ledger();
    s.rolled_back_us = ledger_.rolled_back_us();
    s.wall_s = seconds_between(start_, t);
    s.step = book_.step();
    s.checkpoint_step = book_.saved_step();
    s.restarts = restarts_;
    s.trainer_up = trainer_ && trainer_->running();
    s.hang_timeout_s = hang_.timeout_s();
    s.interruptions = interruptions_;
    s.health_events = health_counts_;
    if (watch_) s.gpus = watch_->readings();
    metrics_->publish(s);
  }

  enum class Phase { Launching, Running };
  int node_;                    //!< this node's index: --node-index, or the node rank the master gave
  Coordination* const coordination_;
  Plan plan_;                   //!< the master's plan this attempt runs under
  const Scenario& scenario_;
  const control::Controller& controller_;
  const SupervisorOptions& o_;
  Clock::time_point start_;
  LiveLedger ledger_;
  LiveEventLog log_;
  HangDetector hang_;
  std::unique_ptr<HealthWatch> watch_;
  std::unique_ptr<KernelLogTail> tail_;
  std::unique_ptr<LiveMetrics> metrics_;
  Clock::time_point metrics_published_{};
  std::unique_ptr<TrainerProcess> trainer_;
  //! A row remap pending: the stop for its GPU reset, and whether the checkpoint it waits for is taken.
  std::optional<std::pair<Cause, bool>> reset_due_;
  std::unique_ptr<CadenceFile> cadence_;  //!< under a master: its checkpoint cadence, for the trainers
  LossSpikeWatch loss_watch_{static_cast<std::size_t>(scenario_.loss_spike.window), scenario_.loss_spike.z,
                             scenario_.loss_spike.ratio, scenario_.loss_spike.confirm};  //!< node rank 0's loss (policies.loss_spike)
  std::optional<std::int64_t> spike_onset_;
  std::int64_t restore_bound_ = -1;       //!< alone, after a loss spike: the next launch restores no later
  SectionWindow sections_;  //!< this node's ranks' compute times since the last report
  Clock::time_point sections_sent_ = Clock::now();
  Phase phase_ = Phase::Launching;
  Clock::time_point last_message_;
  int attempt_ = 0, restarts_ = 0, failed_launches_ = 0;
  std::int64_t generation_ = 0;  //!< under a master: the generation the trainer runs
  ProgressBook book_{ledger_, [this](Micros at, EventKind kind, const std::string& note, double speed) {
                       record(at, kind, note, -1, -1, {}, speed);
                     }};
  bool finished_ = false, evicted_ = false;
  std::deque<RecentFault> recent_;
  std::map<std::string, long> interruptions_, health_counts_;
  SupervisorResult result_;
  LeftBehindPersist left_behind_;
};

}  // namespace

SupervisorResult supervise(const Scenario& scenario, const control::Controller& controller, const SupervisorOptions& options) {
  Supervision supervision(scenario, controller, options);
  return supervision.run();
}

}  // namespace ctwin::live
