#pragma once
//! The job master (`ctwin live master`), on the model of DLRover's job master and NVRx's
//! ft_launcher: agents join, the master assigns node ranks, and every attempt of the job is a
//! generation that all nodes run together. One fault anywhere becomes one decision of the policy
//! library's controller (the simulator's), with a filled ClusterView:
//!
//!   rendezvous --all ranks filled--> gathering(G) --every node stopped, steps known--> running(G)
//!   running(G) --a fault, or an agent gone silent--> gathering(G+1) --...--> running(G+1)
//!
//! While gathering, every node stops its trainer's whole tree and reports the checkpoint steps
//! its ranks hold; the job restarts from the newest step all of them hold (the cross-node commit).
//! A node the controller replaces (or one whose agent went silent) leaves; a hot spare takes its
//! rank, or the job waits for one. The master keeps the job's event log and ledger in the
//! simulator's format from node rank 0's progress messages, and a journal from which a restarted
//! master goes on while the trainers keep running. No I/O but its two files: the HTTP service
//! (live/cluster/master_service, or the local coordination) feeds it, under one lock, with the time passed in.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "live/job/delivery_delay.hpp"
#include "live/job/live_event_log.hpp"
#include "live/job/live_ledger.hpp"
#include "live/job/live_metrics.hpp"
#include "live/job/messages.hpp"
#include "live/job/recovery.hpp"
#include "live/job/progress_book.hpp"
#include "models/scenario.hpp"
#include "policies/checkpoint_policy.hpp"
#include "policies/controller.hpp"
#include "policies/precheck.hpp"
#include "policies/run_forecast.hpp"

namespace ctwin::live {

struct MasterOptions {
  std::string job = "ctwin";
  std::string host;              //!< the master's host, for the log's start row
  int nnodes = 1;                //!< node ranks the job runs on
  int nproc_per_node = 1;        //!< trainer ranks per node (WORLD_SIZE = nnodes x this)
  int trainer_port = 29500;      //!< the trainers' rendezvous port on node rank 0 (MASTER_PORT)
  double report_interval_s = 1;  //!< agents report this often
  double agent_timeout_s = 4;    //!< an agent silent this long (while the master ran) lost its node
  //! A gap between ticks (the service ticks every 50 ms) longer than this is the master's own stall
  //! (stopped, paused, starved), not its agents' silence: that span alone is granted to them.
  double own_stall_s = 0.5;
  int max_restarts = 10;
  std::string events_path;       //!< the job's event log (CSV); empty: none
  std::string journal_path;      //!< empty: no journal (a restarted master starts over)
  double straggler_window_s = 30;  //!< ranks' compute times compared this often (policies.stragglers)
  std::int64_t total_steps = 0;    //!< the run's length, for what evicting a straggler saves (0: as long again as so far)
  double precheck_timeout_s = 60;  //!< a precheck round gives up on a node after this long
  int nvlink_domain_nodes = 0;     //!< > 0: the precheck's units are NVLink domains of this many consecutive node ranks
  bool adopt_steps = false;        //!< --resume: the nodes take the steps another run left in their persist folders
  //! A job of one: the node's index in the log (--node-index, $SLURM_NODEID), for its node rank 0; -1: ranks.
  int log_node = -1;
  //! False for a job of one (`ctwin live run`): no spare can ever take a node's place. A node named
  //! for replacement keeps its rank and is asked to carry the replacement out with its own command:
  //! it leaves (and the job ends there) only when that command ran and succeeded. Evicting a
  //! straggler gains nothing then, and is never done.
  bool spares_possible = true;
  //! The trainers' checkpoint cadence comes from the checkpoint policy (job_cadence.cpp); false:
  //! each trainer keeps its own, as it was launched.
  bool set_cadence = true;
  //! False: a diagnosis's precheck is each node's own check, judged on its own (a node alone has
  //! no peer to be compared with), as the simulator's diagnosis runs it; none before the first start.
  bool precheck_across_nodes = true;
  //! False: the operator turned the policy's precheck off for this job (`--no-precheck`).
  bool prechecks = true;

  //! `--forecast SCENARIO`: the master forecasts the rest of the run from it, learning the rates
  //! from the job's own interruptions (policies/run_forecast.hpp); null: no forecast.
  std::shared_ptr<const Scenario> forecast;

  //! A job of one node: `ctwin live run`, driven in-process (live/job/local_coordination.hpp).
  static MasterOptions job_of_one(std::string host, int nproc_per_node, int max_restarts, bool prechecks, int node_index = 0,
                                  std::string events_path = {});
};

//! A report from an agent this master does not know (it was lost, or the master lost its journal): it joins again.
class UnknownAgent : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JobMaster {
 public:
  using Clock = std::chrono::steady_clock;
  //! Starts a job, or resumes the one in the journal when there is one.
  JobMaster(const Scenario& scenario, const control::Controller& controller, MasterOptions options, Clock::time_point now);

  JoinReply join(const JoinRequest& request, Clock::time_point now);
  //! Takes an agent's report; answers with what its node does now. Throws UnknownAgent.
  Plan report(const Report& report, Clock::time_point now);
  //! A steady-state heartbeat datagram (heartbeat_datagram.hpp): the agent is alive at `step`.
  //! The answer, when there is one: its plan changed (it reports by HTTP next), or it is unknown.
  std::optional<HeartbeatAnswer> heartbeat(const Heartbeat& h, Clock::time_point now);
  //! Agents gone silent, the journal and the log's writes: call it a few times a second.
  void tick(Clock::time_point now);

  bool done() const { return phase_ == Phase::Done; }
  int exit_code() const { return exit_code_; }
  const std::string& reason() const { return reason_; }
  bool resumed() const { return resumed_; }
  double report_interval_s() const { return o_.report_interval_s; }
  //! The job for people and tests: phase, generation, restore step, nodes, ledger.
  nlohmann::json status(Clock::time_point now) const;
  //! Closes the log (the end and the ledger rows) and writes the journal a last time.
  void close(Clock::time_point now);
  const Ledger& ledger() const { return ledger_.ledger(); }
  //! For the metrics: interruptions by class, restarts, the job's step.
  const std::map<std::string, long>& interruptions() const { return interruptions_; }
  int restarts() const { return budget_.restarts(); }
  std::int64_t step() const { return book_.step(); }
  std::int64_t generation() const { return generation_; }
  double rolled_back_s() const { return static_cast<double>(ledger_.rolled_back_us()) / 1e6; }
  int nodes_in(NodeState state) const;
  int spares() const;
  Micros wall_us(Clock::time_point now) const { return ledger_.at(now); }
  //! The job's metrics now (live/job/live_metrics.hpp).
  MetricsSnapshot metrics(Clock::time_point now) const;

 private:
  enum class Phase { Rendezvous, Gathering, Running, Done };
  struct Agent {
    std::string id, host, address;
    std::int64_t node_id = -1;
    int rank = -1;                 //!< -1: a spare
    int left_rank = -1;            //!< the rank it held before it was taken out (its last rows name it)
    std::uint64_t seq = 0;         //!< its last heartbeat datagram's (older ones are replays)
    bool evicted = false;
    std::int64_t took_rank_in = 0;  //!< the generation a spare took its rank in (it then says what it holds for it)
    Clock::time_point last_seen;
    NodeStatus status;
    std::vector<std::string> actions;  //!< named for this node in the current generation
    std::vector<RankSection> sections;  //!< its ranks' compute times, last reported
    Clock::time_point sections_at{};
    std::int64_t sections_generation = -1;
    DeliveryDelay delivery;        //!< how long its reports wait in queues: their ages count from when they left
    std::map<int, StorageReport> storage_failing;  //!< by local rank: persists failing now (a storage alert)
    std::int64_t answered_fault = 0;       //!< its newest health fault asked about and answered (Plan::answered_fault)
    std::int64_t checkpoint_requests = 0;  //!< saves asked of its trainer (Plan::checkpoint_requests)
    std::int64_t launched_generation = 0;  //!< the newest generation it said how it started (NodeStatus::launched)
    RestartPath launched = RestartPath::Relaunch;
  };
  struct Fault {
    int rank;
    std::int64_t generation;  //!< the one it ended (or would have)
    FaultReport report;
    Clock::time_point at;      //!< when it struck
    std::string agent;         //!< the node it struck: a remediation is for it, not for whoever holds its rank later
    Clock::time_point learned; //!< when the master knew: the end of its detection
    bool agent_silent = false; //!< its agent went silent (the node lost): `at` is its last sign of life
    std::vector<Act> answer = {};  //!< the controller's answer, when asked as the fault came (a health fault)
  };

  Plan plan_for(const Agent& a) const;
  //! `left`: when the report left the agent, on the master's clock (its lines' ages count from there).
  void take_lines(const Report& report, Clock::time_point left, Clock::time_point now);
  //! After an agent's state changed: every node finished, or gathering may go on.
  void status_changed(const Agent& a, Clock::time_point now);
  void on_fault(int rank, const FaultReport& fault, Clock::time_point now);
  //! A node's fault: kept for the decision; a health fault is first put to the controller, which
  //! may let it pass (the node's trainer is asked to save, the job goes on).
  void take_fault(Agent& a, const Report& report, Clock::time_point left, Clock::time_point now);
  //! A row only the node saw (NodeEvent), logged under its rank.
  void take_event(const Agent& a, const NodeEvent& e, Clock::time_point left);
  //! A rank's persist began to fail or writes again: the storage alert, raised and cleared per node
  //! (log, status, metrics). Never an interruption: training goes on from memory.
  void take_storage(Agent& a, const StorageReport& r, Clock::time_point left);
  int storage_failing_nodes() const;
  nlohmann::json storage_status() const;
  void begin_gathering(Clock::time_point now, bool in_process = false);
  void lose(Agent& a, const std::string& why, Clock::time_point now);
  //! `back` is the agent of the node `old` held its rank on, started again (the same node id and
  //! run): the old agent's trainer went with it, a node fault, and the rank is `back`'s at once.
  void reclaim(Agent& old, Agent& back, Clock::time_point now);
  void replace(Agent& a, const std::string& note);
  void fall_back_from_failed_restores();
  void discount_own_stall(Clock::time_point now);
  void fill_vacancies(Clock::time_point now);
  void try_to_run(Clock::time_point now);
  void decide(Clock::time_point now);
  //! Whether this decision's recovery may go in process: the policy's mechanism, every fault of the
  //! generation that ended one it takes, and no action but a restart (job_master.cpp).
  bool recovery_in_process(const std::vector<control::Action>& actions) const;
  //! The restart row's ` path=P` (calibrate reads it): in_process, warm_standby, or nothing for a relaunch.
  std::string path_said() const;
  //! The restart path the decision planned: in process, or the policy's mechanism.
  RestartPath path_planned() const;
  //! Once every node says how it started this generation: a restart that took another path than
  //! planned (its slowest node's: a standby not ready, a kept trainer that did not rejoin) is said
  //! in the log.
  void check_launches(Clock::time_point now);
  std::int64_t launches_checked_ = 0;  //!< the newest generation whose launches were checked
  int launches_said_ = 0;              //!< nodes that said how they started the current generation
  void finish(int code, const std::string& reason, Clock::time_point now);
  control::ClusterView view(Clock::time_point now) const;
  void record(Micros at, EventKind kind, const std::string& note = {}, int node = -1, int code = -1, const std::string& fault_class = {},
              double speed = 1.0);
  //! A node rank as the log names it: a job of one keeps its node's own index (MasterOptions::log_node).
  int log_node(int rank) const { return rank >= 0 && o_.log_node >= 0 ? o_.log_node : rank; }
  Agent* agent_at(int rank);
  int vacancies() const;

  //! Running: the checkpoint policy's interval for the costs measured so far, as a cadence in
  //! steps for every trainer (job_cadence.cpp).
  void update_cadence(Clock::time_point now);
  //! Running: ranks' compute times compared within their pipeline stage; a node named twice in a
  //! row by the straggler policy is evicted (job_stragglers.cpp).
  void look_for_stragglers(Clock::time_point now);
  //! Elastic (policies.elastic, job_elastic.cpp): with ranks vacant and no spare, the policy may
  //! shrink the job by whole data-parallel replicas (true when it did); while it runs shrunk and
  //! spares are idle, it may grow back, at the next checkpoint.
  bool try_to_shrink(Clock::time_point now);
  void consider_growing(Clock::time_point now);
  void grow(Clock::time_point now);
  int width() const { return active_replicas_ * replica_nodes_; }  //!< the node ranks in use
  void width_changed(EventKind kind, Clock::time_point now);
  //! Steps the run has left: to --total-steps, else as many again as so far.
  std::int64_t remaining_steps() const;

  //! The precheck across nodes (job_precheck.cpp), before the first start and when a diagnosis
  //! asks for it: the policy's rounds (policies/precheck PrecheckRounds) over the nodes that hold
  //! ranks and the idle spares, or over NVLink domains; each round is a plan `precheck` for the
  //! nodes in it, and their results come back in their reports. True while one runs.
  bool prechecking(Clock::time_point now);
  void start_precheck(Clock::time_point now);
  void start_precheck_round(Clock::time_point now);
  void take_precheck_result(const Agent& a, const NodeCheck& result, Clock::time_point now);
  void end_precheck(Clock::time_point now);
  nlohmann::json precheck_status() const;

  void write_journal(Clock::time_point now);
  void read_journal(Clock::time_point now);

  //! Running, with --forecast: the rest of the run forecast from what the job has done
  //! (job_forecast.cpp), a few times a minute and at each interruption; each interruption's
  //! forecast goes to the log as a `health` row.
  void update_forecast(Clock::time_point now);
  nlohmann::json forecast_status() const;

  const Scenario& scenario_;
  const control::Controller& controller_;
  MasterOptions o_;
  LiveLedger ledger_;
  LiveEventLog log_;
  ProgressBook book_;
  Phase phase_ = Phase::Rendezvous;
  std::int64_t generation_ = 0, restore_step_ = -2, start_utc_us_ = 0;
  std::string run_id_;  //!< this run of the job (journaled): the nodes' persist folders are claimed for it
  std::int64_t incarnation_ = 0;  //!< this master process's (never journaled): heartbeats of an earlier one are refused
  std::unordered_map<std::string, Agent> agents_;
  std::vector<std::string> slots_;  //!< the agent holding each node rank ("" vacant)
  std::vector<Fault> faults_;
  std::string cause_;               //!< the fault class that ended the last generation
  bool decided_ = false;            //!< this gathering's decision is made
  //! This gathering restarts in process (policies/restart_path.hpp): the trainers that can rejoin stay.
  //! Said with the stop as soon as a fault it could take begins it; the decision may take it back.
  bool in_process_ = false;
  bool waited_for_spare_ = false;   //!< since the decision, a rank had no node
  Clock::time_point gathering_since_{}, last_line_at_{}, journal_written_{}, detected_at_{}, silence_checked_{};
  Clock::time_point last_tick_{};
  std::optional<Clock::time_point> all_silent_since_;  //!< every agent silent at once: waited for, not lost
  bool journal_dirty_ = false, resumed_ = false;
  RestartBudget budget_{o_.max_restarts};
  int exit_code_ = 0;
  std::string reason_;
  std::map<std::string, long> interruptions_;
  long storage_alerts_ = 0;
  std::unique_ptr<IntervalPolicy> interval_policy_;
  CheckpointCadence cadence_;
  long cadence_failures_ = 0;  //!< interruptions the newest cadence change knew of
  Clock::time_point cadence_checked_{};
  Clock::time_point stragglers_checked_{};
  int suspect_ = -1;               //!< the node the last window named
  double last_restart_s_ = 30;     //!< what the last restart took (a planned stop costs about as much)
  std::int64_t timed_generation_ = 0;
  std::map<std::int64_t, int> failed_restores_;  //!< generations that failed before restoring, by their restore step
  std::set<std::int64_t> refused_steps_;          //!< steps given up after failing to restore
  std::string restore_note_;        //!< why this generation restores no newer step (said in its plan); empty: none
  std::int64_t clean_bound_ = -1;  //!< this gathering's restore goes no later (a loss spike's onset - 1); -1: any
  int replica_nodes_ = 1, active_replicas_ = 1, total_replicas_ = 1, grow_by_ = 0;  //!< grow_by_: at the next checkpoint
  struct Precheck {
    std::int64_t id = 0;
    std::optional<PrecheckRounds> rounds;
    std::vector<std::vector<std::string>> units;   //!< the agents of each unit checked (a node, or an NVLink domain)
    std::map<std::string, PrecheckTask> tasks;     //!< this round's, by agent
    std::map<std::string, NodeCheck> results;      //!< this round's, by agent
    Clock::time_point began{}, round_began{};
  };
  std::optional<Precheck> precheck_;
  std::optional<RunForecaster> forecaster_;  //!< with --forecast: the scenario's belief, drawn once
  std::optional<RunForecast> forecast_;
  long forecast_logged_ = -1;  //!< the interruptions the last logged forecast knew of
  Clock::time_point forecast_at_{};
  bool precheck_wanted_ = false;    //!< before the first start (the policy enables it) and when a diagnosis asks
  std::int64_t prechecks_ = 0;
};

}  // namespace ctwin::live
