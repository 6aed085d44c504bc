#include "policies/recovery_controller.hpp"

#include <algorithm>

#include "policies/precheck.hpp"
#include "policies/runtime_health.hpp"
#include "policies/spare_pool.hpp"

namespace ctwin {

using control::Action;

RecoveryController::RecoveryController(const Scenario& scenario)
    : xid_actions_(scenario.xid_actions),
      elastic_(scenario.elastic),
      precheck_(scenario.precheck),
      stragglers_(scenario.stragglers),
      spare_pool_(scenario.spare_pool) {}

void RecoveryController::decide(const control::Event& event, const control::ClusterView& view,
                                std::vector<Action>& actions) const {
  switch (event.signal) {
    case control::Signal::Fault: {
      Action action = event.proposed;
      action.node = event.node;
      if (const auto it = xid_actions_.find(event.xid); event.xid >= 0 && it != xid_actions_.end()) {
        action.act = it->second.action;
        if (it->second.action_us) action.seconds = static_cast<double>(*it->second.action_us) / 1e6;
      }
      actions.push_back(action);
      return;
    }
    case control::Signal::Diagnosing:
      if (precheck_.enabled) actions.push_back({Act::RunPrecheck, -1, 0, static_cast<double>(precheck_.duration_us) / 1e6});
      return;
    case control::Signal::SpareShortage: {
      if (!elastic_.shrink) return;  // wait for a spare
      // The nodes present fill floor(present / r) whole replicas; the rest become spares.
      const int present = view.active_replicas * view.replica_nodes - view.vacant_slots;
      const int keep = present / view.replica_nodes;
      if (keep >= elastic_.min_replicas && keep < view.active_replicas)
        actions.push_back({Act::Shrink, -1, view.active_replicas - keep, -1});
      return;
    }
    case control::Signal::NodeReturned: {
      if (!elastic_.shrink || !elastic_.regrow || view.active_replicas >= view.total_replicas) return;
      const int grow = std::min(view.spares_available / view.replica_nodes, view.total_replicas - view.active_replicas);
      if (grow <= 0) return;
      // Growing runs the time left at the wider job's speed.
      const double now_share = view.speed_at(view.active_replicas);
      const double after_share = view.speed_at(view.active_replicas + grow);
      const double saved_s = view.remaining_s / now_share - view.remaining_s / after_share;
      if (saved_s > view.restart_cost_s) actions.push_back({Act::Grow, -1, grow, -1});
      return;
    }
    case control::Signal::StepTimes: {
      if (!stragglers_.evict || !event.step_times || view.step_s <= 0) return;
      const std::map<int, double> times(event.step_times->begin(), event.step_times->end());
      std::map<int, int> groups;
      if (event.step_groups) groups.insert(event.step_groups->begin(), event.step_groups->end());
      const auto d = runtime_straggler(times, view.remaining_s / view.step_s, view.restart_cost_s, stragglers_.z_threshold, groups);
      if (d && d->evict) actions.push_back({Act::Replace, d->node, 0, -1});
      return;
    }
    case control::Signal::SparePool:
      spare_pool_actions(spare_pool_, view, actions);
      return;
    case control::Signal::Heartbeat:
    case control::Signal::CheckpointDone:
      return;  // the live agent's hang detector keeps its own clock
  }
}

void RecoveryController::precheck(const std::vector<int>& nodes, control::PrecheckRunner& runner,
                                  std::vector<Action>& actions) const {
  PrecheckRounds rounds(nodes, runner.timeout_s(), precheck_.confirm_rounds);
  while (!rounds.done()) rounds.record(runner.run_groups(rounds.groups()));
  precheck_actions(rounds.verdict(), actions);
}

void RecoveryController::precheck_actions(const PrecheckVerdict& verdict, std::vector<Action>& actions) const {
  // Most nodes failing is the check's own fault (a wrong setting, a fabric-wide outage), not theirs:
  // evicting them would empty the job.
  if (precheck_most_failed(verdict)) return;
  for (int node : verdict.faulty) actions.push_back({Act::Replace, node, 0, -1});
  if (precheck_.evict_stragglers)
    for (int node : verdict.stragglers_median) actions.push_back({Act::Replace, node, 0, -1});
}

}  // namespace ctwin
