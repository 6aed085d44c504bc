#pragma once
//! A job of one node (`ctwin live run`): the node's supervisor and the job master in one process.
//! The JobMaster that runs a thousand-node job decides this node's faults too, with the options of
//! a job no spare can join (MasterOptions::job_of_one); its messages never leave the process.
//! Every call hands the master what is new at once, with its time, and takes the plan back.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "live/job/coordination.hpp"
#include "live/job/job_master.hpp"

namespace ctwin::live {

class LocalCoordination final : public Coordination {
 public:
  using Clock = std::chrono::steady_clock;
  //! Joins the one node to a new master (whose scenario and controller outlive this object).
  LocalCoordination(const Scenario& scenario, const control::Controller& controller, MasterOptions options);

  std::optional<Plan> plan() override;
  void status(const NodeStatus& status) override;
  void trainer_line(const std::string& line) override;
  void fault(const FaultReport& fault) override;
  void sections(const std::vector<RankSection>& sections) override;
  void precheck_done(const NodeCheck& result) override;
  void storage(const StorageReport& report) override;
  void event(const NodeEvent& event) override;
  std::optional<MetricsSnapshot> job_metrics() const override { return master_.metrics(Clock::now()); }

  const JobMaster& master() const { return master_; }
  //! The supervisor is done: the master closes the job's log and ledger, if the job's end has not already.
  void close();

 private:
  //! Reports `pending_` (with the node's last status), ticks the master, keeps its plan.
  void exchange();

  JobMaster master_;
  Report pending_;
  Plan plan_;
};

}  // namespace ctwin::live
