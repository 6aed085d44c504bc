// Stragglers, live: in a synchronous job every rank sees the same step time, so the agents send
// each rank's compute time (collectives excluded, as NVRx's straggler detection measures it) and
// its group (pipeline stage and role). The policy library's straggler rule compares each rank with
// its own group only (a long last stage is not a slow node) and evicts when the time saved over
// the rest of the run beats a restart. A node is named by two windows in a row before it goes: a
// real job must not lose a healthy node to one noisy window.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "live/job/job_master.hpp"
#include "policies/fault_classes.hpp"

namespace ctwin::live {

void JobMaster::look_for_stragglers(Clock::time_point now) {
  if (phase_ != Phase::Running || !scenario_.stragglers.evict || !o_.spares_possible) return;
  if (now - stragglers_checked_ < std::chrono::duration<double>(o_.straggler_window_s)) return;
  stragglers_checked_ = now;
  std::vector<std::pair<int, double>> times;  // by global rank
  std::vector<std::pair<int, int>> groups;
  const auto window = std::chrono::duration<double>(o_.straggler_window_s);
  for (int node = 0; node < o_.nnodes; ++node) {
    const Agent* a = agent_at(node);
    if (!a || a->sections_generation != generation_ || now - a->sections_at > window) continue;
    for (const RankSection& x : a->sections) {
      const int rank = node * o_.nproc_per_node + x.local_rank;
      times.emplace_back(rank, x.seconds);
      groups.emplace_back(rank, x.group);
    }
  }
  const double step_s = book_.step_s();
  if (times.size() < 3 || step_s <= 0) return;
  control::Event event;
  event.time_s = static_cast<double>(ledger_.at(now)) / 1e6;
  event.signal = control::Signal::StepTimes;
  event.step_times = &times;
  event.step_groups = &groups;
  control::ClusterView v = view(now);
  v.step_s = step_s;
  v.remaining_s = static_cast<double>(remaining_steps()) * step_s;
  v.restart_cost_s = last_restart_s_;
  std::vector<control::Action> actions;
  controller_.decide(event, v, actions);
  int named = -1;
  for (const auto& act : actions)
    if (act.act == Act::Replace && act.node >= 0) named = act.node / o_.nproc_per_node;
  if (named < 0 || named != suspect_) {  // nobody, or a first window: measured again before it goes
    if (named >= 0) record(ledger_.marked(), EventKind::Health, "straggler suspected: node rank " + std::to_string(named) + " (measured again)", named);
    suspect_ = named;
    return;
  }
  suspect_ = -1;
  double slowest = 0;
  for (const auto& [rank, t] : times)
    if (rank / o_.nproc_per_node == named) slowest = std::max(slowest, t);
  char detail[160];
  std::snprintf(detail, sizeof detail, "compute %.4f s per step: slower than the ranks of its stage twice in a row", slowest);
  const LiveFaultClass straggler = classify_stop(scenario_, LiveStop::Straggler);
  const FaultReport fault{straggler, detail, -1, -1, 0};
  faults_.push_back({named, generation_, fault, now, slots_[static_cast<std::size_t>(named)], now});
  on_fault(named, fault, now);
}

}  // namespace ctwin::live
