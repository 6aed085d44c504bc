// Where the trial asks its controller (policies/controller.hpp): the action for a failed part, a
// precheck in the diagnosis, shrinking on a spare shortage, regrowing when nodes return, evicting
// a straggler. The controller decides; the trial carries the decision out and keeps the ledger.
#include <algorithm>
#include <cmath>

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "trial/trial.hpp"

namespace ctwin {

namespace {

//! Healthy nodes that join the suspects in a simulated precheck or step-time window. The verdicts
//! are robust statistics (medians, MAD), which a sample of healthy nodes pins down; drawing all
//! 2,048 nodes of a 16k-GPU job at every restart would cost milliseconds per trial.
constexpr int kHealthySample = 31;
constexpr double kPrecheckNoise = 0.02;  //!< spread of healthy burn-in times (log scale)
constexpr double kStepNoise = 0.01;      //!< spread of healthy per-node step times

//! The node check as the simulator sees it: a healthy node takes about one unit, a slow one
//! 1 / its speed factor, a bad one times out; a group runs at its slowest member.
class SimulatedPrecheck final : public control::PrecheckRunner {
 public:
  SimulatedPrecheck(std::vector<std::pair<int, double>> node_time, Rng& rng) : node_time_(std::move(node_time)), rng_(rng) {}
  std::vector<double> run_groups(const std::vector<std::vector<int>>& groups) override {
    std::vector<double> out;
    boost::random::lognormal_distribution<double> noise(0.0, kPrecheckNoise);
    for (const auto& group : groups) {
      double slowest = 0;
      for (int node : group) slowest = std::max(slowest, time_of(node));
      out.push_back(slowest >= kTimeout ? kTimeout : slowest * noise(rng_));
    }
    return out;
  }
  double timeout_s() const override { return kTimeout; }

 private:
  static constexpr double kTimeout = 10;
  double time_of(int node) const {
    for (const auto& [n, t] : node_time_)
      if (n == node) return t;
    return 1;
  }
  std::vector<std::pair<int, double>> node_time_;
  Rng& rng_;
};

}  // namespace

Micros Trial::remaining_wall(Micros t) const {
  const Micros to_end = config_.end_us == kNever ? kNever : config_.end_us - t;
  if (config_.work_us == kNever) return to_end;
  return std::min(to_end, wall_for_work(config_.work_us - committed_ - uncommitted_));
}

control::ClusterView Trial::view(Micros t) const {
  control::ClusterView v;
  v.now_s = micros_to_seconds(t);
  v.job_nodes = config_.job_nodes;
  v.replica_nodes = replica_nodes_;
  v.active_replicas = active_replicas_;
  v.total_replicas = total_replicas_;
  v.vacant_slots = static_cast<int>(pool_.vacancies());
  v.spares_available = static_cast<int>(pool_.spares());
  v.spares_added = spares_added_;
  v.spares_arriving = spares_arriving_;
  v.step_s = micros_to_seconds(config_.step_us);
  const Micros left = remaining_wall(t);
  v.remaining_s = left == kNever ? 1e12 : micros_to_seconds(left);
  v.restart_cost_s = micros_to_seconds(save_us_ + config_.restart_overhead_us + config_.restore_us);
  v.speed_by_replicas = config_.speed_by_replicas;
  return v;
}

const std::vector<control::Action>& Trial::consult(const control::Event& event, Micros t, double restart_cost_s) {
  control::ClusterView v = view(t);
  if (restart_cost_s >= 0) v.restart_cost_s = restart_cost_s;
  actions_.clear();
  config_.controller->decide(event, v, actions_);
  return actions_;
}

//! Xid -> action: the controller may change what the catalogue proposes for the failed part.
void Trial::consult_fault(Micros t, const FaultClass& fc, int node, int gpu, Act& action, Micros& action_us) {
  control::Event e;
  e.time_s = micros_to_seconds(t);
  e.signal = control::Signal::Fault;
  e.node = node;
  e.gpu = gpu;
  e.xid = fc.xid.value_or(-1);
  e.proposed = {action, node, 0, micros_to_seconds(action_us)};
  for (const control::Action& a : consult(e, t)) {
    if (a.node >= 0 && a.node != node) continue;
    if (is_repair(a.act)) {
      action = a.act;
      if (a.seconds >= 0) action_us = seconds_to_micros(a.seconds);
      return;
    }
  }
}

void Trial::begin_diagnosis(Micros t) {
  Micros duration = pending_diagnosis_us_;
  if (config_.controller) {
    control::Event e;
    e.time_s = micros_to_seconds(t);
    e.signal = control::Signal::Diagnosing;
    for (const control::Action& a : consult(e, t))
      if (a.act == Act::RunPrecheck) {
        duration += seconds_to_micros(std::max(0.0, a.seconds));
        precheck_pending_ = true;
      }
  }
  enter(Phase::Diagnose, t, duration);
}

//! The node check over the job's nodes: the suspects (a bad part a misdiagnosis left in the job, a
//! slow node) and a sample of healthy ones. The controller runs DLRover's two rounds on them.
void Trial::run_precheck(Micros t) {
  precheck_pending_ = false;
  std::vector<std::pair<int, double>> suspects;
  boost::random::bernoulli_distribution<double> caught(config_.precheck_detect_probability);
  for (const Recurrence& r : recurrences_)
    if (pool_.in_job(r.node) && caught(control_rng_)) suspects.emplace_back(r.node, 1e9);
  for (const SlowEpisode& e : slow_)
    if (e.node >= 0 && e.factor > 0 && pool_.in_job(e.node)) suspects.emplace_back(e.node, 1 / e.factor);
  std::vector<int> nodes;
  for (const auto& [node, time] : suspects) nodes.push_back(node);
  const int active_slots = active_replicas_ * replica_nodes_;
  int slot = boost::random::uniform_int_distribution<int>(0, std::max(0, active_slots - 1))(control_rng_);
  for (int seen = 0, added = 0; seen < active_slots && added < kHealthySample; ++seen, slot = (slot + 1) % active_slots) {
    const int node = pool_.node_in_slot(slot);
    if (node < 0 || std::find(nodes.begin(), nodes.end(), node) != nodes.end()) continue;
    nodes.push_back(node);
    ++added;
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  SimulatedPrecheck runner(std::move(suspects), control_rng_);
  actions_.clear();
  config_.controller->precheck(nodes, runner, actions_);
  const std::vector<control::Action> evictions = actions_;
  for (const control::Action& a : evictions) {
    if (a.act != Act::Replace || a.node < 0) continue;
    const int in_slot = pool_.slot_of(a.node);
    if (in_slot < 0) continue;
    emit(t, EventKind::Evicted, a.node);
    emit(t, EventKind::NodeDown, a.node);
    depart({in_slot, a.node, kNever, 0});
    // Its misdiagnosed fault and its slowness leave with it.
    recurrences_.erase_if([&](const Recurrence& r) { return r.node == a.node; });
    slow_.erase(std::remove_if(slow_.begin(), slow_.end(), [&](const SlowEpisode& e) { return e.node == a.node; }), slow_.end());
    refresh_slow_next_end();
    update_speed();
  }
}

void Trial::consult_shortage(Micros t) {
  if (!config_.controller) return;
  control::Event e;
  e.time_s = micros_to_seconds(t);
  e.signal = control::Signal::SpareShortage;
  for (const control::Action& a : consult(e, t))
    if (a.act == Act::Shrink && a.replicas > 0) {
      shrink(t, a.replicas);
      return;
    }
}

void Trial::consult_pool(Micros t) {
  if (!config_.controller) return;
  control::Event e;
  e.time_s = micros_to_seconds(t);
  e.signal = control::Signal::SparePool;
  for (const control::Action& a : consult(e, t)) {
    if (a.act == Act::TopUp && a.nodes > 0 && spares_arriving_ == 0) {
      top_up_due_ = t + seconds_to_micros(std::max(0.0, a.seconds));
      for (int k = 0; k < a.nodes; ++k) pool_.schedule_return(top_up_due_, pool_.add_node());
      spares_added_ += a.nodes;
      spares_arriving_ = a.nodes;
    } else if (a.act == Act::ExpediteRepairs && a.seconds >= 0) {
      pool_.expedite_repairs(t + seconds_to_micros(a.seconds));
    }
  }
}

bool Trial::consult_grow(Micros t, double restart_cost_s) {
  if (!config_.controller) return false;
  control::Event e;
  e.time_s = micros_to_seconds(t);
  e.signal = control::Signal::NodeReturned;
  for (const control::Action& a : consult(e, t, restart_cost_s))
    if (a.act == Act::Grow && a.replicas > 0) {
      grow_by_ = a.replicas;
      return true;
    }
  return false;
}

//! Step times of the slow nodes and a healthy sample, `straggler_observe` after a node turned slow.
void Trial::check_stragglers(Micros t) {
  std::vector<int> due;
  while (const auto check = straggler_checks_.take_due(t)) due.push_back(check->node);
  if (phase_ != Phase::Up) return;  // the job is down: the precheck, if any, looks at it then
  for (int node : due) {
    const bool still_slow = std::any_of(slow_.begin(), slow_.end(), [node](const SlowEpisode& e) { return e.node == node; });
    if (!still_slow || !pool_.in_job(node)) continue;
    std::vector<std::pair<int, double>> step_times;
    const double step_s = micros_to_seconds(config_.step_us);
    for (const SlowEpisode& e : slow_)
      if (e.node >= 0 && e.factor > 0 && pool_.in_job(e.node)) step_times.emplace_back(e.node, step_s / e.factor);
    boost::random::lognormal_distribution<double> noise(0.0, kStepNoise);
    const int active_slots = active_replicas_ * replica_nodes_;
    for (int slot = 0, added = 0; slot < active_slots && added < kHealthySample; ++slot) {
      const int other = pool_.node_in_slot(slot);
      if (other < 0 || std::any_of(step_times.begin(), step_times.end(), [other](const auto& s) { return s.first == other; })) continue;
      step_times.emplace_back(other, step_s * noise(control_rng_));
      ++added;
    }
    control::Event e;
    e.time_s = micros_to_seconds(t);
    e.signal = control::Signal::StepTimes;
    e.step_times = &step_times;
    for (const control::Action& a : consult(e, t))
      if (a.act == Act::Replace && a.node >= 0 && pool_.in_job(a.node)) {
        evict(t, a.node);
        return;  // one planned stop at a time
      }
  }
}

//! A straggler leaves: the job saves, the node goes to the repair shop, a spare (or a shrink) follows.
void Trial::evict(Micros t, int node) {
  emit(t, EventKind::SlowEnd, node, -1, nullptr, 1.0);
  emit(t, EventKind::Evicted, node);
  emit(t, EventKind::NodeDown, node);
  depart({pool_.slot_of(node), node, kNever, 0});
  slow_.erase(std::remove_if(slow_.begin(), slow_.end(), [node](const SlowEpisode& e) { return e.node == node; }), slow_.end());
  refresh_slow_next_end();
  update_speed();
  begin_planned_stop(t, PlannedStop::Evict, in_save_ ? save_left_ : blocking_save_us());
}

//! Drops whole replicas from the end: their nodes fill the vacancies left in the others, and the
//! rest wait in the pool. Progress runs at active / total of full speed.
void Trial::shrink(Micros t, int replicas) {
  replicas = std::min(replicas, active_replicas_ - 1);
  if (replicas <= 0) return;
  pool_.release_slots((active_replicas_ - replicas) * replica_nodes_, active_replicas_ * replica_nodes_);
  active_replicas_ -= replicas;
  update_speed();
  emit(t, EventKind::Shrunk, -1, -1, nullptr, share_, active_replicas_);
  fill_vacancies(t);
}

void Trial::grow(Micros t, int replicas) {
  replicas = std::min({replicas, total_replicas_ - active_replicas_, static_cast<int>(pool_.spares()) / replica_nodes_});
  if (replicas <= 0) return;
  const int first = active_replicas_ * replica_nodes_;
  for (int slot = first; slot < first + replicas * replica_nodes_; ++slot) pool_.add_vacancy(slot);
  active_replicas_ += replicas;
  update_speed();
  emit(t, EventKind::Grown, -1, -1, nullptr, share_, active_replicas_);
  fill_vacancies(t);
}

//! Compute time that did no work: first what the missing replicas cost (shrunk), then the slow parts.
void Trial::account_drag(Micros wall, Micros work, Micros times) {
  Ledger& ledger = result_.ledger;
  if (share_ >= 1.0) {
    ledger[Category::Degraded] += times * (wall - work);
    return;
  }
  Micros full_width = slow_speed_ >= 1.0 ? wall : static_cast<Micros>(std::floor(static_cast<double>(wall) * slow_speed_));
  full_width = std::clamp(full_width, work, wall);
  ledger[Category::Shrunk] += times * (full_width - work);
  ledger[Category::Degraded] += times * (wall - full_width);
}

}  // namespace ctwin
