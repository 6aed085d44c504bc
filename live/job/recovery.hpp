#pragma once
//! A restart after a fault, the same for a job of one node and of a thousand: the controller's
//! two answers (to the fault, then to its diagnosis) and the restart budget, which the job master
//! keeps (a node's supervisor only asks whether a health event is a fault at all).

#include <optional>
#include <string>
#include <vector>

#include "policies/controller.hpp"
#include "policies/fault_classes.hpp"

namespace ctwin::live {

//! The controller's answer to a fault on `node`, its class's remediation proposed; empty when it
//! says to carry on.
std::vector<control::Action> answer_fault(const control::Controller& controller, const control::ClusterView& view, int node,
                                          const LiveFaultClass& fault, int gpu, int xid);
//! The controller's answer once the fault's node is diagnosed (a precheck, say), added to `actions`.
void answer_diagnosis(const control::Controller& controller, const control::ClusterView& view, int node,
                      std::vector<control::Action>& actions);

//! The restarts a job may make, and the launches that may fail before the trainer ever restores.
class RestartBudget {
 public:
  explicit RestartBudget(int most_restarts) : most_(most_restarts) {}
  void restarted() { ++restarts_; }
  int restarts() const { return restarts_; }
  int failed_launches() const { return failed_launches_; }
  //! A resumed job's counts (the master's journal).
  void resume(int restarts, int failed_launches) { restarts_ = restarts, failed_launches_ = failed_launches; }
  //! A launch ended before its trainer restored (true) or after (false).
  void launch_ended(bool before_restoring) { failed_launches_ = before_restoring ? failed_launches_ + 1 : 0; }
  //! Why the job gives up rather than restart again; nullopt while it may.
  std::optional<std::string> spent() const;

 private:
  int most_, restarts_ = 0, failed_launches_ = 0;
};

}  // namespace ctwin::live
