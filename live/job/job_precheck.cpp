// The job master's precheck across nodes (job_master.hpp): DLRover's node check with nodes, not
// single GPUs, as the units, before the first start and in every diagnosis that asks for it.
// The rounds are the policy library's (PrecheckRounds, the very code the simulator's trials run
// through RecoveryController::precheck); the master hands each round to the agents as plans and
// collects their results, without ever blocking: a round ends when every node answered, or when
// its timeout (and a little for the agents' reports) has passed, and then a node that did not
// answer has failed it.
#include <algorithm>
#include <iostream>

#include "core/wall_clock.hpp"
#include "live/job/job_master.hpp"

namespace ctwin::live {

namespace {

using Clock = JobMaster::Clock;

}  // namespace

//! Gathering, decided: starts the precheck when one is wanted and every node has stopped; runs it
//! on. True while it runs (the job does not start before it ends).
bool JobMaster::prechecking(Clock::time_point now) {
  if (!precheck_ && precheck_wanted_) {
    for (const auto& [id, a] : agents_)
      if (!a.evicted && a.status.state == NodeState::Running) return true;  // it stops first
    start_precheck(now);
  }
  if (!precheck_) return false;
  bool all_in = true;
  for (const auto& [id, task] : precheck_->tasks) {
    const auto it = agents_.find(id);
    // A node lost meanwhile (or evicted) has failed its round: no need to wait for it.
    all_in &= precheck_->results.count(id) || it == agents_.end() || it->second.evicted;
  }
  const double grace_s = 2 + 2 * o_.report_interval_s;  // the agent kills its GPU processes 1 s past the timeout, then reports
  if (!all_in && seconds_between(precheck_->round_began, now) < o_.precheck_timeout_s + grace_s) return true;
  if (!precheck_->rounds) {  // each node's own check: its verdict is its own
    end_precheck(now);
    return false;
  }
  // The round's group times: the slowest member's; a failure or no answer is the timeout.
  const NodeGroups& groups = precheck_->rounds->groups();
  std::vector<double> group_s;
  int failed = 0;
  double slowest = 0;
  for (const auto& group : groups) {
    double t = 0;
    bool passed = true;
    for (const int unit : group)
      for (const auto& id : precheck_->units[static_cast<std::size_t>(unit)]) {
        const auto it = precheck_->results.find(id);
        passed &= it != precheck_->results.end() && it->second.passed;
        if (it != precheck_->results.end()) t = std::max(t, it->second.seconds);
      }
    group_s.push_back(passed ? std::min(t, o_.precheck_timeout_s) : o_.precheck_timeout_s);
    failed += !passed;
    if (passed) slowest = std::max(slowest, t);
  }
  char note[160];
  std::snprintf(note, sizeof note, "precheck round %d: %zu groups; %d failed; slowest passing %.3f s", precheck_->rounds->round(), groups.size(),
                failed, slowest);
  // The groups, by their nodes' hosts, with their times (the first few): what a person checks first.
  std::string detail = note;
  for (std::size_t g = 0; g < groups.size() && g < 8; ++g) {
    detail += g ? " | " : ": ";
    for (std::size_t i = 0; i < groups[g].size(); ++i)
      for (const auto& id : precheck_->units[static_cast<std::size_t>(groups[g][i])])
        detail += (detail.back() == ' ' ? "" : "+") + agents_.at(id).host;
    std::snprintf(note, sizeof note, " %.3f s", group_s[g]);
    detail += note;
  }
  record(ledger_.at(now), EventKind::Health, detail);
  precheck_->rounds->record(group_s);
  if (!precheck_->rounds->done()) {
    start_precheck_round(now);
    return true;
  }
  end_precheck(now);
  return false;
}

//! The units: each node holding a rank and each idle spare, or with NVLink domains, each domain
//! of the job's node ranks (a domain is scheduled, and replaced, as one).
void JobMaster::start_precheck(Clock::time_point now) {
  precheck_wanted_ = false;
  Precheck p;
  p.id = ++prechecks_;
  p.began = now;
  if (!o_.precheck_across_nodes) {  // every node holding a rank runs its own check, all of its GPUs
    for (int r = 0; r < width(); ++r) {
      const std::string& id = slots_[static_cast<std::size_t>(r)];
      if (id.empty()) continue;
      p.units.push_back({id});
      p.tasks[id] = {"pc" + std::to_string(p.id) + ".node" + std::to_string(r), o_.nproc_per_node, 0, o_.nproc_per_node, o_.precheck_timeout_s};
    }
    p.round_began = now;
    precheck_ = std::move(p);
    record(ledger_.at(now), EventKind::Health, "precheck: each node's own check, " + std::to_string(precheck_->units.size()) + " nodes");
    return;
  }
  if (o_.nvlink_domain_nodes > 0) {
    for (int first = 0; first < width(); first += o_.nvlink_domain_nodes) {
      std::vector<std::string> domain;
      for (int r = first; r < std::min(width(), first + o_.nvlink_domain_nodes); ++r)
        if (!slots_[static_cast<std::size_t>(r)].empty()) domain.push_back(slots_[static_cast<std::size_t>(r)]);
      if (!domain.empty()) p.units.push_back(domain);
    }
  } else {
    for (int r = 0; r < width(); ++r)
      if (!slots_[static_cast<std::size_t>(r)].empty()) p.units.push_back({slots_[static_cast<std::size_t>(r)]});
    std::vector<std::string> spares;
    for (const auto& [id, a] : agents_)
      if (a.rank < 0 && !a.evicted) spares.push_back(id);
    std::sort(spares.begin(), spares.end());  // the order of a hash map is not the job's
    for (const auto& id : spares) p.units.push_back({id});
  }
  std::vector<int> units(p.units.size());
  for (std::size_t u = 0; u < units.size(); ++u) units[u] = static_cast<int>(u);
  p.rounds.emplace(units, o_.precheck_timeout_s, scenario_.precheck.confirm_rounds);
  precheck_ = std::move(p);
  record(ledger_.at(now), EventKind::Health,
         "precheck across nodes: " + std::to_string(units.size()) + (o_.nvlink_domain_nodes > 0 ? " NVLink domains" : " nodes") + "; timeout " +
             std::to_string(static_cast<long>(o_.precheck_timeout_s)) + " s");
  std::cerr << "ctwin master: precheck across " << units.size() << " units begins\n";
  if (precheck_->rounds->done()) return;  // nothing to check: ended at the next look
  start_precheck_round(now);
}

//! Every node of the round's groups gets its task: its GPUs' place among the group's.
void JobMaster::start_precheck_round(Clock::time_point now) {
  Precheck& p = *precheck_;
  p.tasks.clear();
  p.results.clear();
  p.round_began = now;
  const NodeGroups& groups = p.rounds->groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::vector<std::string> nodes;
    for (const int unit : groups[g])
      for (const auto& id : p.units[static_cast<std::size_t>(unit)]) nodes.push_back(id);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      PrecheckTask task;
      task.key = "pc" + std::to_string(p.id) + ".r" + std::to_string(p.rounds->round()) + ".g" + std::to_string(g);
      task.ranks = static_cast<int>(nodes.size()) * o_.nproc_per_node;
      task.first_rank = static_cast<int>(i) * o_.nproc_per_node;
      task.gpus = o_.nproc_per_node;
      task.timeout_s = o_.precheck_timeout_s;
      p.tasks[nodes[i]] = task;
    }
  }
}

void JobMaster::take_precheck_result(const Agent& a, const NodeCheck& result, Clock::time_point now) {
  if (!precheck_) return;
  const auto it = precheck_->tasks.find(a.id);
  if (it == precheck_->tasks.end() || it->second.key != result.key) return;  // a round that is over
  precheck_->results[a.id] = result;
  if (!result.passed)
    record(ledger_.at(now), EventKind::Health, "precheck " + result.key + " failed on host=" + a.host + ": " + result.error, a.rank);
}

//! The controller's actions on the verdict: a faulty (or, as the policy says, slow) unit leaves;
//! a spare takes a rank left vacant. The check's time is the diagnosis's, as in the simulator.
void JobMaster::end_precheck(Clock::time_point now) {
  ledger_.charge(generation_ > 1 ? Category::Diagnosis : Category::Restart, now);
  PrecheckVerdict own;  // each node's own check: failed, or its time
  if (!precheck_->rounds)
    for (std::size_t u = 0; u < precheck_->units.size(); ++u) {
      const auto it = precheck_->results.find(precheck_->units[u].front());
      if (it != precheck_->results.end() && it->second.passed) own.time[static_cast<int>(u)] = it->second.seconds;
      else own.faulty.push_back(static_cast<int>(u));
    }
  const PrecheckVerdict& verdict = precheck_->rounds ? precheck_->rounds->verdict() : own;
  std::vector<control::Action> actions;
  controller_.precheck_actions(verdict, actions);
  if (precheck_most_failed(verdict))
    record(ledger_.at(now), EventKind::Health,
           "precheck: " + std::to_string(verdict.faulty.size()) + " of " + std::to_string(precheck_->units.size()) +
               " failed both rounds; the check itself is suspect (its settings; the fabric): nobody is evicted");
  for (const auto& action : actions) {
    if (action.act != Act::Replace || action.node < 0 || action.node >= static_cast<int>(precheck_->units.size())) continue;
    const bool faulty = std::count(verdict.faulty.begin(), verdict.faulty.end(), action.node) > 0;
    for (const auto& id : precheck_->units[static_cast<std::size_t>(action.node)]) {
      Agent& a = agents_.at(id);
      if (a.evicted) continue;
      std::cerr << "ctwin master: the precheck names " << a.host << (a.rank >= 0 ? " (node rank " + std::to_string(a.rank) + ")" : std::string(" (a spare)"))
                << " for replacement\n";
      replace(a, std::string("host=") + a.host + " precheck: " + (faulty ? (precheck_->rounds ? "failed both rounds" : "failed its own check") : "straggler"));
    }
  }
  precheck_.reset();
  fill_vacancies(now);
  journal_dirty_ = true;
}

nlohmann::json JobMaster::precheck_status() const {
  if (!precheck_) return nullptr;
  return {{"id", precheck_->id},
          {"round", precheck_->rounds ? precheck_->rounds->round() : 0},
          {"units", precheck_->units.size()},
          {"waiting_for", precheck_->tasks.size() - precheck_->results.size()}};
}

}  // namespace ctwin::live
