#pragma once
//! What a node's supervisor and the job master (live/cluster) tell each other. Standing alone,
//! the supervisor decides for its node; under a master (`ctwin live agent`) it launches only when
//! the master's plan says so, reports its faults, and stops its trainer whenever the master moves
//! the job to a new generation, so that one fault anywhere becomes one coordinated restart.
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

#include "policies/checkpoint_policy.hpp"

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
  std::string reason;
  //! Which steps the trainers save (the checkpoint policy's interval, in steps); no changes: their own.
  CheckpointCadence cadence;
  std::optional<PrecheckTask> precheck;  //!< with PlanKind::Precheck
};

enum class NodeState { Waiting, Running, Stopped, Finished };

//! A node's fault, as the master hears it: when it happened is `age_s` before the report left.
struct FaultReport {
  std::string fault_class, detail;
  int gpu = -1, xid = -1;
  double age_s = 0;
  std::int64_t clean_step = -1;  //!< silent corruption: the newest step known clean (the restore goes no later); -1: any
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
};

//! One rank's compute time per step (collectives excluded), the median over the last report's
//! window, and its group (pipeline stage and role): the master finds stragglers by rank.
struct RankSection {
  int local_rank = 0, group = 0;
  double seconds = 0;
};

//! The supervisor's side of the link to a master (the agent implements it over HTTP). Calls do
//! not block on the network: reports go out from the link's own thread.
class Coordination {
 public:
  virtual ~Coordination() = default;
  //! The newest plan heard from the master; nullopt before the first.
  virtual std::optional<Plan> plan() = 0;
  virtual void status(const NodeStatus& status) = 0;
  //! A protocol line from the trainer (live/supervisor/heartbeat.hpp), for the job's ledger.
  virtual void trainer_line(const std::string& line) = 0;
  //! Sent at once, not at the next report.
  virtual void fault(const FaultReport& fault) = 0;
  //! This node's ranks' compute times: sent with the next report (by HTTP).
  virtual void sections(const std::vector<RankSection>& sections) = 0;
};

const char* to_string(PlanKind kind);
std::optional<PlanKind> plan_kind_named(const std::string& name);
const char* to_string(NodeState state);
std::optional<NodeState> node_state_named(const std::string& name);

}  // namespace ctwin::live
