#pragma once
//! The controller: the one place where recovery decisions are made, for the simulator's trial and
//! for the live controller alike. It takes timestamped events and a read-only view of the cluster
//! and answers with actions. It is stateless and deterministic: whatever it must remember arrives
//! in the view, so one instance serves every trial on every worker thread.
//!
//! This header is the whole interface: the trial (trial/) and the live agent consult a controller
//! through it. Actions speak the one remediation vocabulary (models/remediation.hpp).

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "models/remediation.hpp"
#include "policies/precheck.hpp"

namespace ctwin::control {

enum class Signal : std::uint8_t {
  Fault,          //!< a part failed and the job stopped: node, gpu, xid, the catalogue's proposed action
  Diagnosing,     //!< the job stopped and its diagnosis begins: the moment to schedule a precheck
  SpareShortage,  //!< the diagnosis is done, slots are vacant and the spare pool is empty
  NodeReturned,   //!< a node came back to the pool while the job runs shrunk
  StepTimes,      //!< per-node step times over an observation window
  SparePool,      //!< the spare pool changed (a spare taken, a node back): the moment to top it up or expedite repairs
  Heartbeat,      //!< live: a rank reported progress (hang detection)
  CheckpointDone, //!< live: a checkpoint completed
};


struct Action {
  Act act = Act::None;  //!< RunPrecheck: `seconds` it takes; Shrink, Grow: by `replicas`; TopUp: `nodes` in `seconds`
  int node = -1;
  int replicas = 0;
  double seconds = -1;  //!< how long the action takes; < 0: the catalogue's figure
  int nodes = 0;        //!< TopUp: nodes ordered for the pool
};

struct Event {
  double time_s = 0;
  Signal signal = Signal::Fault;
  int node = -1;
  int gpu = -1;
  int xid = -1;
  Action proposed;  //!< Fault: what the fault catalogue says to do
  const std::vector<std::pair<int, double>>* step_times = nullptr;  //!< StepTimes: (node, seconds per step)
  //! StepTimes: (node, its pipeline stage and role); each node is compared within its group only.
  const std::vector<std::pair<int, int>>* step_groups = nullptr;
};

//! Speed of a job running `active` of `total` replicas: from `table` (by active replicas) where it
//! has a positive entry, else active / total.
inline double replica_speed(std::span<const double> table, int active, int total) {
  if (active >= total) return 1.0;
  const auto i = static_cast<std::size_t>(std::max(active, 0));
  return i < table.size() && table[i] > 0 ? table[i] : static_cast<double>(active) / total;
}

//! What the controller may read about the cluster; filled by the trial or by the live agent.
struct ClusterView {
  double now_s = 0;
  int job_nodes = 0;         //!< at full width
  int replica_nodes = 1;     //!< nodes per data-parallel replica
  int active_replicas = 1;
  int total_replicas = 1;
  int vacant_slots = 0;      //!< in the active replicas
  int spares_available = 0;
  int spares_added = 0;      //!< nodes top-ups added to the pool so far, arrived or on their way
  int spares_arriving = 0;   //!< of those, on their way
  double step_s = 0;         //!< failure-free step at full width
  double remaining_s = 0;    //!< wall time the run has left at full width
  double restart_cost_s = 0; //!< what a planned stop costs: save, restart and restore
  //! Job speed by active replicas when a step model knows it (the global batch is kept, so a
  //! narrower job beats active / total); empty: active / total.
  std::span<const double> speed_by_replicas;  //!< the owner outlives the view
  double speed_at(int replicas) const;
};
inline double ClusterView::speed_at(int replicas) const { return replica_speed(speed_by_replicas, replicas, total_replicas); }

//! Runs one round of the node check: each group of nodes does its burn-in together; the answer is
//! each group's time in seconds (the timeout when it failed). The simulator draws them; the live
//! agent runs NCCL and cuBLAS.
class PrecheckRunner {
 public:
  virtual ~PrecheckRunner() = default;
  virtual std::vector<double> run_groups(const std::vector<std::vector<int>>& groups) = 0;
  virtual double timeout_s() const = 0;
};

class Controller {
 public:
  virtual ~Controller() = default;
  //! Appends the actions for `event` to `actions` (nothing appended: wait).
  virtual void decide(const Event& event, const ClusterView& view, std::vector<Action>& actions) const = 0;
  //! The node check over `nodes`: runs its rounds through `runner`, appends a Replace per node to evict.
  virtual void precheck(const std::vector<int>& nodes, PrecheckRunner& runner, std::vector<Action>& actions) const = 0;
  //! What a finished precheck's verdict asks for (a caller that ran PrecheckRounds itself): a Replace per node to evict.
  virtual void precheck_actions(const PrecheckVerdict& verdict, std::vector<Action>& actions) const = 0;
};

}  // namespace ctwin::control
