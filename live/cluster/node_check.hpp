#pragma once
//! A node's part of the precheck across nodes (DLRover's node check, at node granularity): the
//! master pairs nodes; each node of a pair burns in every one of its GPUs with GEMMs, then all
//! the pair's GPUs run one all-reduce together, whose id goes from the group's first GPU to the
//! others through the master (MasterExchange). One process per GPU, as NCCL wants: the agent
//! starts them (`pair-check`), bounds them by the round's timeout (a hung one is killed), and
//! reports the slowest one's figures as its node's.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "live/backend/device.hpp"
#include "live/cluster/protocol.hpp"
#include "live/precheck/bootstrap.hpp"
#include "live/precheck/injection.hpp"

namespace ctwin::live::cluster {

//! One GPU's part: what `pair-check` runs.
struct MemberCheckOptions {
  int gemm_n = 8192, burn_in_iterations = 10;
  std::size_t allreduce_bytes = std::size_t(64) << 20;
  int allreduce_iterations = 5;
  double timeout_s = 60;
  bool stuck = false;  //!< injected: the process stops answering after the id exchange (tests)
  double delay_s = 0;  //!< injected: the burn-in takes this much longer (tests: a slow node, whatever the load)
};
//! Burn-in, then the group's all-reduce; never longer than the timeout (its error says why it failed).
NodeCheck check_member(ComputeDevice& device, Bootstrap& group, const MemberCheckOptions& o);
//! One line of JSON on stdout, read back by the agent.
std::string member_result_line(const NodeCheck& result);

struct NodeCheckOptions {
  std::vector<std::string> command;  //!< this program and the words before `pair-check`'s flags
  std::string master_host, token;
  int master_port = 0;
  std::string backend = "cuda";
  std::optional<int> gemm_n, burn_in_iterations;
  std::optional<std::size_t> allreduce_bytes;
  //! Injected fault (cpu backend, tests; live/precheck/injection.hpp): slow and delay every round,
  //! noisy in the first two rounds only (a busy moment that a measurement again must see through),
  //! stuck (a hung process).
  std::optional<Injection> inject;
};

//! The agent's side: runs a task's GPU processes on its own thread and hands the node's result to `done`.
class NodeCheckRunner {
 public:
  NodeCheckRunner(NodeCheckOptions options, std::function<void(const NodeCheck&)> done);
  ~NodeCheckRunner();
  NodeCheckRunner(const NodeCheckRunner&) = delete;
  NodeCheckRunner& operator=(const NodeCheckRunner&) = delete;
  //! Queues the task: it runs once the one before it has ended (each is bounded by its timeout).
  //! Never blocks: the agent's link calls it.
  void start(const PrecheckTask& task);

 private:
  void work();
  NodeCheck run(const PrecheckTask& task, int round);
  NodeCheckOptions o_;
  std::function<void(const NodeCheck&)> done_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<PrecheckTask> pending_;
  bool stopping_ = false;
  int rounds_run_ = 0;
  std::thread thread_;
};

}  // namespace ctwin::live::cluster
