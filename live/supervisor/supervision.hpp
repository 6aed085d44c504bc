#pragma once
//! The supervisor's state machine (supervise() in supervisor.hpp is its interface): one trainer,
//! its heartbeats and exits, the master's plans, health events and interruptions. It observes,
//! reports and acts: every fault and every row of the job's log goes to the master, which keeps the
//! one set of books (ledger, event log) and makes every decision, in a job of one node as in a
//! thousand. Private to live/supervisor: supervisor.cpp runs it, supervision_faults.cpp takes its faults.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "live/health/health_watch.hpp"
#include "live/health/kernel_log_tail.hpp"
#include "live/job/heartbeat.hpp"
#include "live/supervisor/job_launch.hpp"
#include "live/supervisor/left_behind_persist.hpp"
#include "live/job/live_metrics.hpp"
#include "live/supervisor/supervisor.hpp"
#include "live/supervisor/trainer_process.hpp"
#include "live/supervisor/warm_standby.hpp"
#include "policies/fault_classes.hpp"
#include "policies/restart_path.hpp"
#include "policies/runtime_health.hpp"

namespace ctwin::live {

struct Cause {
  LiveFaultClass fault;
  int gpu = -1, xid = -1;
  std::string detail;
  bool trainer_can_save = true;  //!< false for a hang or a lost GPU: asking it to save would only wait
  std::optional<std::chrono::steady_clock::time_point> struck = std::nullopt;  //!< when it struck, when known before it was seen (a hang: the last heartbeat)
  std::int64_t clean_step = -1;  //!< silent corruption seen late: the restore goes no later than this step
  bool silent = false;  //!< found by silence (a hang): `struck` is its last sign of life, not its cause
  bool ask = false;  //!< a health fault the trainer runs through: whether it stops the job is the master's question
  bool worker_only = false;  //!< a launcher's worker failed and the launcher runs on (an in-process restart may keep it)
};

//! What the node's rank 0 said of its progress: the node's own view (the job's books are the master's).
struct TrainerProgress {
  std::int64_t step = -1, saved_step = -1, nan_step = -1;
  bool done = false;
  void launched() { nan_step = -1, done = false; }
  void apply(const TrainerMessage& m);
};

class Supervision {
 public:
  using Clock = std::chrono::steady_clock;
  Supervision(const Scenario& scenario, const SupervisorOptions& o);
  ~Supervision() = default;
  Supervision(const Supervision&) = delete;
  Supervision& operator=(const Supervision&) = delete;
  SupervisorResult run();

 private:
  // --- the trainer ---------------------------------------------------------------------------
  //! Starts the plan's attempt: a trainer kept across an in-process restart rejoins it (rejoin),
  //! else a new one is launched.
  void launch();
  //! In-process restart (Plan::in_process): the kept trainer's control file names the new
  //! generation and its restore step; its healthy ranks rejoin where they are, its launcher replaces
  //! the ones that failed.
  void rejoin();
  //! The trainers' environment common to every attempt (the launch adds the plan's).
  WarmStandby::Environment node_environment();
  //! --warm-standby: a trainer process started ahead for the next launch, unless one waits already.
  void keep_standby();
  //! Whether the trainer stays across the stop of `p`'s generation: it said it rejoins in process,
  //! runs still, and the plan keeps it.
  bool keeps_trainer(const Plan& p);
  //! This node's status in its generation, with how its trainer started (`launched_`).
  NodeStatus own_status(NodeState state) const;
  std::optional<RestartPath> launched_;  //!< how this generation's trainer started here
  //! A kept trainer stays only once every local rank has torn its collectives down (`rejoining`) or
  //! failed (its launcher's `failed`): one that says neither in time (InProcessRejoin, policies/
  //! restart_path.hpp) is killed, which fails its peers' collectives, and its node launches anew.
  //! True while it waits for them.
  bool awaiting_rejoin_ready(const Plan& p);
  void take_messages();
  //! Passive mode: a step line of the trainer's output is the heartbeat it does not send. The
  //! first one after a launch says where it resumed: a progress bar's first count (no rate yet) is
  //! the step it starts from, a Megatron line reports a step just done.
  void on_output_line(const std::string& line, Clock::time_point t);
  void on_line(const std::string& line, Clock::time_point t);
  //! Every rank's compute times, summed up for the master once a window (a median per rank).
  void on_section(const TrainerMessage& m, Clock::time_point t);
  void on_persist(const TrainerMessage& m, Clock::time_point t);
  //! A launcher that outlives its workers (ctwin_ranks.py) says one failed: the node's crash, its
  //! launcher kept should the master restart in process.
  void on_worker_failed(const TrainerMessage& m, Clock::time_point t);
  //! Ranks waiting to rejoin while no fault came (rejoining_since_): the node's crash, its trainer kept.
  void check_rejoin_alone(Clock::time_point t);
  void on_exit(int status, Clock::time_point t);
  void check_hang(Clock::time_point t);
  //! A time on the system clock (a worker's record of its failure) on this clock, between the start and now.
  Clock::time_point when_said(std::chrono::system_clock::time_point at) const;

  // --- the job master's plans ---------------------------------------------------------------
  //! The first global rank of this node's trainer ranks, and the job's ranks (flash slot names).
  int rank_base() const { return std::max(plan_.node_rank, 0) * o_.flash_ranks; }
  int world() const { return std::max(plan_.nnodes, 1) * o_.flash_ranks; }

  //! The steps this node's ranks hold whole (their shards verified); a step refused is said once.
  std::optional<std::vector<std::int64_t>> node_restorable();
  //! Stopped: waits for the master's next `run` (true) or `exit` (false, finished). Meanwhile it
  //! tells the master what this node can restore, and carries out the actions named for it.
  bool await_run(NodeState waiting = NodeState::Stopped);
  //! The persist folder claimed for the plan's run (job_launch.hpp); empty, or why not (said once).
  const std::string& claim_persist_folder_for(const Plan& p);
  //! Running: reports this node's progress; when the master has moved the job on (a fault on
  //! another node, or its own decision), the trainer's whole tree goes at once: its collectives
  //! would only wait for the ranks that are gone.
  void follow_plan();
  //! An action the master asked for by name; the command is this node's own (dry-run by default).
  //! Returns whether this node leaves the job (the command ran and succeeded).
  bool carry_out_named(const std::string& name);
  //! The node's own check (--precheck-cmd), when its plan names a task for it: its time is the
  //! diagnosis's; exit 1 says a GPU here is faulty or slow.
  NodeCheck own_precheck(const PrecheckTask& task);

  // --- health --------------------------------------------------------------------------------
  struct RecentFault {
    Clock::time_point at;
    int xid, gpu;
  };
  const RecentFault* recent_fault(Clock::time_point t) const;
  void take_health(bool may_interrupt = true);
  void on_health(const HealthEvent& e, bool may_interrupt);
  //! The metrics' label of a health response (ctwin_health_events_total{kind=...}).
  static const char* response_label(HealthResponse r);
  //! A row of the job's event log about this node, seen at `t`, for the master to log
  //! (NodeEvent); `fault_class`: the class it concerns (empty: none).
  void record(Clock::time_point t, EventKind kind, std::string note = {}, int gpu = -1, int code = -1, const std::string& fault_class = {},
              double speed = 1.0);

  //! Asks the trainer to save after its current step (SIGUSR1): the work since the last checkpoint
  //! is worth keeping before a likely failure.
  void checkpoint_now(const std::string& why);
  //! A health fault asked about: the master's answer, once its plan has one. Let pass, the fault is
  //! done with; a new generation stops the trainer as this fault's interruption.
  void follow_answer(const Plan& p);

  // --- an interruption -----------------------------------------------------------------------
  //! Stops the trainer, reports the fault to the master and follows its plan (the job's books are
  //! the master's: it logs the interruption when it decides).
  void interrupt(const Cause& cause, Clock::time_point t);
  //! Stops the trainer for `cause` (saving first where the scenario says so) and persists what it left.
  void stop_for(const Cause& cause);
  //! Returns whether this node leaves the job (the command ran and succeeded).
  bool carry_out(Act act, const Cause& cause);
  //! The newest snapshot left in shared memory by a killed trainer goes to disk, in the background
  //! (left_behind_persist.hpp).
  void persist_left_behind();
  //! Logs the background persist's outcome once it is done (or, with `wait`, waits for it).
  void finish_persist(bool wait);
  //! A finished run whose checkpoints are on disk leaves no shared memory behind.
  void release_slots() const;
  std::string host() const;

  // --- the end -------------------------------------------------------------------------------
  void stop_on_request();
  void finish(int code, const std::string& reason);
  //! The metrics, for the exposer's own threads: at most every 200 ms, and at the end.
  void publish_metrics(bool now);
  enum class Phase { Launching, Running };
  int node_;                    //!< this node's index: --node-index, or the node rank the master gave
  Coordination* const coordination_;  //!< the job master: across the network, or in this process
  Plan plan_;                   //!< the master's plan this attempt runs under
  const Scenario& scenario_;
  const SupervisorOptions& o_;
  Clock::time_point start_;
  HangDetector hang_;
  std::unique_ptr<HealthWatch> watch_;
  std::unique_ptr<KernelLogTail> tail_;
  std::unique_ptr<LiveMetrics> metrics_;
  Clock::time_point metrics_published_{};
  std::unique_ptr<TrainerProcess> trainer_;
  //! A row remap pending: the stop for its GPU reset, and whether the checkpoint it waits for is taken.
  std::optional<std::pair<Cause, bool>> reset_due_;
  std::unique_ptr<CadenceFile> cadence_;  //!< the master's checkpoint cadence, for the trainers
  std::unique_ptr<WarmStandby> standby_;  //!< --warm-standby
  std::optional<Clock::time_point> standby_due_;  //!< when the next standby starts (a second into the attempt)
  LossSpikeWatch loss_watch_{static_cast<std::size_t>(scenario_.loss_spike.window), scenario_.loss_spike.z,
                             scenario_.loss_spike.ratio, scenario_.loss_spike.confirm};  //!< node rank 0's loss (policies.loss_spike)
  std::optional<std::int64_t> spike_onset_;
  SectionWindow sections_;  //!< this node's ranks' compute times since the last report
  Clock::time_point sections_sent_ = Clock::now();
  Phase phase_ = Phase::Launching;
  Clock::time_point last_message_;
  Clock::time_point last_pass_;  //!< the main loop's last pass: lines read after a stall of its own say nothing of the trainer's pace
  int attempt_ = 0, restarts_ = 0;
  std::int64_t generation_ = 0;  //!< the generation the trainer runs
  std::int64_t acted_ = 0;       //!< the newest generation whose actions for this node were carried out
  //! This node's fault the master is deciding: a remediation named for this node is for its GPU.
  std::optional<Cause> own_fault_;
  //! A health fault whose answer the master has not given yet (the trainer runs on meanwhile).
  std::optional<std::pair<Cause, std::int64_t>> asked_;
  std::int64_t asked_ids_ = 0;
  std::int64_t checkpoints_asked_ = 0, incarnation_ = 0;  //!< the plan's checkpoint_requests carried out, of the master's incarnation
  std::string prechecked_;  //!< the newest precheck task this node ran
  TrainerProgress progress_;
  bool finished_ = false, evicted_ = false;
  bool rejoins_ = false;  //!< the trainer said it rejoins a generation in process (`inprocess`)
  std::set<int> ranks_rejoining_, ranks_failed_;  //!< local ranks waiting for the next generation, or failed
  std::optional<Clock::time_point> stop_seen_;    //!< when the kept trainer's generation was first seen stopping
  //! When a rank of this attempt first said `rejoining`: no next generation in time (InProcessRejoin),
  //! and this node reports it, as a crash; the master's decision weighs it against the others.
  //! Meanwhile the trainer waits, and is not hung.
  std::optional<Clock::time_point> rejoining_since_;
  std::deque<RecentFault> recent_;
  std::set<int> storage_failing_;  //!< local ranks whose persist fails now
  std::set<std::string> said_refused_;  //!< steps said not restorable (a bad shard), each once
  std::string claimed_run_, claim_problem_;  //!< the run this node's persist folder serves, or why it cannot
  std::map<std::string, long> interruptions_, health_counts_;
  SupervisorResult result_;
  LeftBehindPersist left_behind_;
};

}  // namespace ctwin::live
