#pragma once
//! A node's supervisor's link to its job master. The supervisor decides nothing for the job: it
//! launches only when the master's plan says so, reports its faults, and stops its trainer whenever
//! the master moves the job to a new generation, so that one fault anywhere becomes one coordinated
//! restart. The master is across the network (`ctwin live agent`: live/cluster/agent_link) or, for
//! a job of one node (`ctwin live run`), in the same process (local_coordination.hpp).

#include <optional>
#include <string>
#include <vector>

#include "live/job/live_metrics.hpp"
#include "live/job/messages.hpp"

namespace ctwin::live {

//! The supervisor's side of the link to a master (the agent implements it over HTTP). Calls do
//! not block on the network: reports go out from the link's own thread.
class Coordination {
 public:
  virtual ~Coordination() = default;
  //! The newest plan heard from the master; nullopt before the first.
  virtual std::optional<Plan> plan() = 0;
  virtual void status(const NodeStatus& status) = 0;
  //! A protocol line from the trainer (live/job/heartbeat.hpp), for the job's ledger.
  virtual void trainer_line(const std::string& line) = 0;
  //! Sent at once, not at the next report.
  virtual void fault(const FaultReport& fault) = 0;
  //! This node's ranks' compute times: sent with the next report (by HTTP).
  virtual void sections(const std::vector<RankSection>& sections) = 0;
  //! This node's result of a precheck task its plan named.
  virtual void precheck_done(const NodeCheck& result) = 0;
  //! A rank's persist began to fail, or writes again: sent at once.
  virtual void storage(const StorageReport& report) = 0;
  //! A row for the job's event log that only this node sees (its age counted at the call).
  virtual void event(const NodeEvent& event) = 0;
  //! The job's metrics (its ledger), where the master is in this process (a job of one); else
  //! nullopt: the master serves them.
  virtual std::optional<MetricsSnapshot> job_metrics() const { return std::nullopt; }
};

}  // namespace ctwin::live
