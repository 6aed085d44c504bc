#pragma once
//! What the nodes and the job master tell each other, as plain structs: the job's logic
//! (job_master.hpp) and each node's supervisor speak them; live/cluster carries them (JSON over
//! HTTP, heartbeat datagrams), and in a job of one they never leave the process.
//!
//! Generations: the master numbers each attempt of the whole job. A plan `stop` of generation G
//! asks every node to stop what runs and report the checkpoint steps its ranks can restore; a plan
//! `run` of generation G launches attempt G from `restore_step`, the newest step every rank of the
//! job holds complete (a cross-node commit: a kill during a save on one node never makes ranks
//! restore different steps).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/event.hpp"
#include "policies/checkpoint_policy.hpp"
#include "policies/fault_classes.hpp"
#include "policies/restart_path.hpp"

namespace ctwin::live {

enum class PlanKind { Wait, Stop, Run, Exit, Precheck };

//! Precheck: this node's part of one round of the node check across nodes (live/cluster/node_check):
//! a burn-in on each of its GPUs, then one all-reduce over every GPU of its group, whose id the
//! group's first GPU hands to the others through the master.
struct PrecheckTask {
  std::string key;        //!< the round and the group, unique in the job
  int ranks = 0;          //!< GPUs in the group, every node's
  int first_rank = 0;     //!< this node's first one in the group
  int gpus = 1;           //!< this node's GPUs (one process each)
  double timeout_s = 60;  //!< the whole round: nothing of it waits longer
};

struct Plan {
  std::int64_t generation = 0;
  PlanKind what = PlanKind::Wait;
  int node_rank = -1;                //!< -1: a spare
  int nnodes = 0, nproc_per_node = 1;
  std::string master_addr;           //!< the trainers' rendezvous (torchrun's MASTER_ADDR)
  int master_port = 0;
  //! Run: the step every rank restores; -1 start fresh; -2 the trainer chooses (no flash checkpoints known).
  std::int64_t restore_step = -2;
  std::vector<std::string> actions;  //!< by name, carried out with this node's own commands before the launch
  std::string cause;                 //!< the fault class that ended the last generation
  int exit_code = 0;                 //!< Exit
  std::string reason;                //!< why (a run: why it restores no newer step; empty: nothing to say)
  //! Which steps the trainers save (the checkpoint policy's interval, in steps); no changes: their own.
  CheckpointCadence cadence;
  std::optional<PrecheckTask> precheck;  //!< with PlanKind::Precheck
  //! The job's run ("JOB/RUN-ID", new with every master started without its journal): a node's
  //! persist folder holds the steps of one run, and a node refuses another run's unless
  //! `adopt_steps` (the master's --resume) says to take them.
  std::string run;
  bool adopt_steps = false;
  //! The master process's incarnation (new at each start, journal or not): the agent's heartbeat
  //! datagrams carry it, so that one captured before a master restarted is refused after it.
  std::int64_t incarnation = 0;
  //! The newest of this node's health faults (FaultReport::ask) the master has answered; 0: none.
  //! Answered within this generation, the controller let it pass: the job goes on.
  std::int64_t answered_fault = 0;
  //! The plan's action `checkpoint_now`, as a count: each time the master asks this node's trainer
  //! to save after its current step (a health fault let pass), it grows by one.
  std::int64_t checkpoint_requests = 0;
  //! In-process restart (issue 51; policies/restart_path.hpp): with `stop`, a node keeps a trainer that
  //! says it can rejoin (its processes wait, their collectives torn down); with `run`, such a trainer
  //! rejoins this generation at `restore_step` where it is (its control file says so), and only a node
  //! whose trainer is gone launches one. False: every trainer stops, and every node launches.
  bool in_process = false;
};

enum class NodeState { Waiting, Running, Stopped, Finished };

//! A node's fault, as the master hears it: when it happened is `age_s` before the report left.
//! The node resolved its class once (policies/fault_classes): the master takes it as it is.
struct FaultReport {
  LiveFaultClass fault;  //!< name, effect and the class's remediation
  std::string detail;
  int gpu = -1, xid = -1;
  double age_s = 0;
  std::int64_t clean_step = -1;  //!< silent corruption: the newest step known clean (the restore goes no later); -1: any
  bool before_restoring = false;  //!< the trainer failed before it restored: its restore may be what fails
  //! The generation it ended; -1: the one the report's status names. Set when the node learns of its
  //! own fault only as it follows the job into the next generation (a worker's record).
  std::int64_t generation = -1;
  //! Found by silence (a hang): dated at its last sign of life. A peer's failure before it was found
  //! is the likelier cause: a collective waits for a rank that died.
  bool silent = false;
  //! A health fault the trainer still runs through: whether it stops the job at all is the
  //! master's question to the controller. Let pass, the plan says so (Plan::answered_fault) and asks
  //! for a checkpoint; else the job stops as for any fault. `id` numbers them per agent.
  bool ask = false;
  std::int64_t id = 0;
};

struct NodeStatus {
  std::int64_t generation = 0;  //!< the newest generation this node acted on
  NodeState state = NodeState::Waiting;
  std::int64_t step = -1;
  //! Stopped or waiting: the steps all of this node's ranks can restore, newest first; nullopt
  //! when the trainer keeps no flash checkpoints (it chooses its own restore).
  std::optional<std::vector<std::int64_t>> restorable;
  //! The node rank `restorable` is for (a spare that was just given a rank says so once it has looked).
  int node_rank = -1;
  //! Why this node cannot take part (its persist folder holds another run's steps): the job ends, exit 2.
  std::string problem = {};
  //! Running: how this generation's trainer started here (kept in process, the warm standby, or
  //! cold), whatever the plan hoped: the restart row's path is checked against it.
  std::optional<RestartPath> launched = std::nullopt;
};

//! One rank's compute time per step (collectives excluded), the median over the last report's
//! window, and its group (pipeline stage and role): the master finds stragglers by rank.
struct RankSection {
  int local_rank = 0, group = 0;
  double seconds = 0;
};

struct JoinRequest {
  std::string agent;            //!< this agent process's id: a restarted agent is a new one
  std::int64_t node_id = -1;    //!< SLURM_NODEID, a pod ordinal or --node-id: the node rank it asks for (-1: any)
  std::string host;             //!< for people and {host} in commands
  std::string address;          //!< where this node's trainers are reached (MASTER_ADDR when it is node rank 0)
  bool spare = false;           //!< joins as a hot spare
  //! The run ("JOB/RUN-ID", Plan::run) this node served before its agent started again (its own
  //! memory of it, or its persist folder's claim): with `node_id`, it takes its rank back at once.
  std::string run = {};
};

struct JoinReply {
  std::string job;
  int node_rank = -1;           //!< -1: a spare
  double report_interval_s = 1;
  //! The master's (Plan::incarnation): the agent's heartbeats carry it from the join on, before any plan.
  std::int64_t incarnation = 0;
};

struct TrainerLine {
  double age_s = 0;             //!< how long before the report it was heard
  std::string line;
};

//! A node's result of one precheck round (its PrecheckTask): every local GPU's burn-in, then the
//! group's all-reduce; the slowest GPU's figures.
struct NodeCheck {
  std::string key;
  bool passed = false;
  double seconds = 0;      //!< burn-in + all-reduce
  double gemm_flops = 0;   //!< the slowest GPU's burn-in
  double allreduce_s = 0;
  std::string error;       //!< why it failed
};

//! A node's checkpoint persist began to fail (a full disk, a quota, I/O) or writes again: a storage
//! fault, never an interruption. Training goes on from memory while the persister retries; the master
//! raises the alert (log, status, metrics).
struct StorageReport {
  int local_rank = 0;
  std::int64_t step = -1;  //!< failing: the step it could not write; else the step it wrote
  bool failing = false;
  std::string detail;      //!< why it fails
  double age_s = 0;        //!< how long before the report left it was heard
};

//! What only a node sees, for the job's event log (the master's, the one set of books): a health
//! reading, an operator command's result, its ranks' restore, a checkpoint step refused, a crashed
//! trainer's snapshot persisted. The master logs it under the node's rank.
struct NodeEvent {
  EventKind kind = EventKind::Health;
  std::string note;
  int gpu = -1, code = -1;
  std::string fault_class;  //!< the class it concerns (empty: none)
  double speed = 1.0;       //!< slow_begin: the GPU's speed factor
  double age_s = 0;         //!< how long before the report left it was seen
};

//! The kinds a node may report (health, slow_begin, slow_end, to_repair, evicted): never the job's
//! own rows (interrupted, detected, restart, restore, checkpoint, the ledger, the end), which only
//! the master writes.
bool node_may_report(EventKind kind);

//! An agent's report to the master: its node's state, node rank 0's trainer lines, a fault, its
//! ranks' compute times, a precheck result, what it saw.
struct Report {
  std::string agent;
  NodeStatus status;
  std::vector<TrainerLine> lines;
  std::optional<FaultReport> fault;
  std::vector<RankSection> sections;  //!< the node's ranks' compute times, now and then
  std::optional<NodeCheck> precheck;
  std::vector<StorageReport> storage;  //!< persist outcomes that changed, oldest first
  std::vector<NodeEvent> events;       //!< oldest first
  //! When it left, by the agent's steady clock (microseconds): the master tells the report's time in
  //! queues from it (delivery_delay.hpp). Absent in a job of one (no queues).
  std::optional<std::int64_t> sent_us = std::nullopt;
};

//! What a steady-state report says when nothing but the step changed (one datagram).
struct Heartbeat {
  std::string agent;
  std::uint64_t seq = 0;
  std::int64_t generation = 0;
  NodeState state = NodeState::Running;
  std::int64_t step = -1;
  std::int64_t known_generation = 0;  //!< the plan the agent follows
  PlanKind known_plan = PlanKind::Wait;
  std::int64_t known_cadence = 0;  //!< the checkpoint cadence's revision it follows
  std::int64_t incarnation = 0;    //!< the master's, from the plan it follows (Plan::incarnation)
};

//! The master's answer: the plan changed (`plan` set), or the agent is unknown (`unknown`).
struct HeartbeatAnswer {
  std::string agent;
  std::uint64_t seq = 0;
  bool unknown = false;
  std::int64_t generation = 0;
  PlanKind plan = PlanKind::Wait;
};

const char* to_string(PlanKind kind);
std::optional<PlanKind> plan_kind_named(const std::string& name);
const char* to_string(NodeState state);
std::optional<NodeState> node_state_named(const std::string& name);

}  // namespace ctwin::live
