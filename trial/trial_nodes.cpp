// Who is in the job: spares taking vacant slots, the repair shop, escalation and misdiagnosis of
// the part that failed, and the nodes a network part takes away. The rest of the trial (time,
// compute and saves, the recovery chain) is in trial.cpp.
#include <algorithm>
#include <cmath>

#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

#include "trial/trial.hpp"

namespace ctwin {

//! Spares take the vacant slots. Up to `hot_count` of them are kept warm and swap in quickly.
void Trial::fill_vacancies(Micros t) {
  int warm = std::min(config_.shop.hot_count, static_cast<int>(spare_pool_.size()));
  while (!vacant_slots_.empty() && !spare_pool_.empty()) {
    const Vacancy vacancy = vacant_slots_.front();
    const int node = spare_pool_.front();
    vacant_slots_.pop_front();
    spare_pool_.pop_front();
    slot_node_[static_cast<std::size_t>(vacancy.slot)] = node;
    node_slot_[static_cast<std::size_t>(node)] = vacancy.slot;
    pending_action_us_ = std::max(pending_action_us_, warm-- > 0 ? config_.shop.hot_swap_us : vacancy.swap_us);
    emit(t, EventKind::SpareAssigned, node);
  }
}

//! When a node sent for repair comes back, if ever: triage, manual repair (fixed or lognormal),
//! and an RMA when the repair fails; a node that failed too often is retired instead.
Micros Trial::repair_turnaround(int node, Micros t, bool& retired) {
  const RepairShop& shop = config_.shop;
  retired = false;
  if (shop.retire_after > 0) {
    // Retired at its N-th failure within the window: when its N most recent all fall inside it.
    const auto k = static_cast<std::size_t>(shop.retire_after);
    const Micros* ring = &node_failures_[static_cast<std::size_t>(node) * k];
    const std::size_t known = std::min<std::size_t>(node_failure_count_[static_cast<std::size_t>(node)], k);
    const Micros since = t - shop.retire_within_us;
    if (known == k && std::all_of(ring, ring + k, [since](Micros f) { return f >= since; })) {
      retired = true;
      return kNever;
    }
  }
  Micros repair = shop.triage_us + config_.repair_us;
  if (shop.repair_median_us > 0) {
    const double draw = boost::random::lognormal_distribution<double>(std::log(shop.repair_median_us), shop.repair_sigma)(shop_rng_);
    repair = shop.triage_us + static_cast<Micros>(std::llround(std::min(draw, 1e15)));
  }
  if (shop.failure_probability > 0 && boost::random::bernoulli_distribution<double>(shop.failure_probability)(shop_rng_))
    repair += shop.rma_us;
  return t + repair;
}

void Trial::record_failure(int node, Micros t) {
  if (node_failures_.empty()) return;
  const auto k = static_cast<std::size_t>(config_.shop.retire_after);
  auto& count = node_failure_count_[static_cast<std::size_t>(node)];
  node_failures_[static_cast<std::size_t>(node) * k + count % k] = t;
  if (count < 65535) ++count;
}

void Trial::leave_diagnosis(Micros t) {
  if (precheck_pending_) run_precheck(t);
  for (const Departure& d : departures_) {
    if (slot_node_[static_cast<std::size_t>(d.slot)] != d.node) continue;  // struck twice: already out
    slot_node_[static_cast<std::size_t>(d.slot)] = -1;
    node_slot_[static_cast<std::size_t>(d.node)] = -1;
    vacant_slots_.push_back({d.slot, d.swap_us});
    if (d.back == kNever) {
      bool retired = false;
      const Micros back = repair_turnaround(d.node, t, retired);
      emit(t, retired ? EventKind::Retired : EventKind::ToRepair, d.node);
      if (!retired) returns_.emplace(back, d.node);
    } else {
      returns_.emplace(std::max(d.back, t), d.node);  // back with its network part
    }
    // A node that was rebooting and is now out comes back through the repair shop or its part instead.
    rebooting_nodes_.erase(std::remove(rebooting_nodes_.begin(), rebooting_nodes_.end(), d.node), rebooting_nodes_.end());
  }
  departures_.clear();
  fill_vacancies(t);
  if (!vacant_slots_.empty()) consult_shortage(t);
  // The job restarts anyway: replicas that can come back cost nothing extra.
  if (vacant_slots_.empty() && active_replicas_ < total_replicas_ && consult_grow(t, 0)) grow(t, grow_by_);
  if (vacant_slots_.empty()) {
    begin_restart(t);
    return;
  }
  emit(t, EventKind::WaitingForSpare);
  enter(Phase::WaitSpare, t, kNever);
}

//! The part that failed: its action (escalated when it keeps failing) and what happens to its node.
bool Trial::stop_part(Micros t, const FaultClass& fc, int slot, int node, int gpu) {
  Act action = fc.action;
  Micros action_us = fc.action_us;
  if (fc.escalation) {
    auto& recent = recent_faults_[static_cast<std::size_t>(&fc - config_.faults.data())];
    const Micros since = t - fc.escalation->within_us;
    recent.erase(recent.begin(), std::find_if(recent.begin(), recent.end(), [since](const auto& f) { return f.second >= since; }));
    const std::int64_t part = static_cast<std::int64_t>(node) * 256 + std::max(gpu, 0);
    recent.emplace_back(part, t);
    const auto same_part = std::count_if(recent.begin(), recent.end(), [part](const auto& f) { return f.first == part; });
    if (same_part >= fc.escalation->after) {
      action = fc.escalation->action;
      action_us = fc.escalation->action_us;
      recent.erase(std::remove_if(recent.begin(), recent.end(), [part](const auto& f) { return f.first == part; }), recent.end());
      emit(t, EventKind::Escalated, node, gpu, &fc);
    }
  }
  if (config_.controller) consult_fault(t, fc, node, gpu, action, action_us);
  if (action == Act::Reboot) {
    emit(t, EventKind::NodeDown, node);
    if (std::find(rebooting_nodes_.begin(), rebooting_nodes_.end(), node) == rebooting_nodes_.end()) rebooting_nodes_.push_back(node);
  }
  if (action != Act::Replace) {
    pending_action_us_ = std::max(pending_action_us_, action_us);
    return action == Act::Reboot;
  }
  // Replace: the node leaves after the diagnosis, and a spare swaps in (action_us, unless warm).
  // The diagnosis may blame the wrong node: that one is replaced, and the bad one fails again.
  const RepairShop& shop = config_.shop;
  if (shop.misdiagnosis_probability > 0 && config_.job_nodes > 1 &&
      boost::random::bernoulli_distribution<double>(shop.misdiagnosis_probability)(shop_rng_)) {
    int wrong = boost::random::uniform_int_distribution<int>(0, config_.job_nodes - 2)(shop_rng_);
    if (wrong >= slot) ++wrong;
    const int blamed = slot_node_[static_cast<std::size_t>(wrong)];
    if (blamed >= 0) {
      emit(t, EventKind::Misdiagnosed, blamed, -1, &fc);
      emit(t, EventKind::NodeDown, blamed);
      departures_.push_back({wrong, blamed, kNever, action_us});
      const auto delay = boost::random::exponential_distribution<double>(1.0)(shop_rng_) *
                         static_cast<double>(shop.recurrence_mean_us);
      recurrences_.push_back({t + static_cast<Micros>(std::llround(std::min(delay, 1e15))),
                              static_cast<std::uint32_t>(&fc - config_.faults.data()), node, gpu});
      return true;
    }
  }
  emit(t, EventKind::NodeDown, node);
  departures_.push_back({slot, node, kNever, action_us});
  return true;
}

void Trial::take_from_pool(int node, Micros back) {
  const auto it = std::find(spare_pool_.begin(), spare_pool_.end(), node);
  if (it == spare_pool_.end()) return;  // in repair, or held already
  spare_pool_.erase(it);
  returns_.emplace(back, node);
  emit(now_, EventKind::NodeDown, node);
}

//! A leaf, spine or cable failed: the nodes behind it leave the job (and the spare pool) until the
//! part is replaced; with a slow effect the job runs on at the speed factor. Returns whether the
//! job was touched.
bool Trial::on_network_fault(const FaultStrike& strike, const FaultClass& fc) {
  const Micros t = strike.time;
  const NetworkDomain& domain =
      config_.network->per_class[strike.fault_class][static_cast<std::size_t>(strike.slot)];
  const Micros back = t + fc.detection_us + fc.diagnosis_us + fc.action_us;
  std::vector<int> out_of_job;
  for (int node : domain.nodes_out) {
    if (node_slot_[static_cast<std::size_t>(node)] >= 0) out_of_job.push_back(node);
    else take_from_pool(node, back);
  }
  bool slows = fc.effect == Effect::Slow && domain.slows_everyone;
  for (int node : domain.nodes_degraded) slows |= node_slot_[static_cast<std::size_t>(node)] >= 0;
  if (out_of_job.empty() && !slows) {
    emit(t, EventKind::FaultIgnored, -1, -1, &fc, 1.0, strike.slot);
    return false;
  }
  emit(t, EventKind::Fault, -1, -1, &fc, 1.0, strike.slot);
  if (slows) {
    slow_.push_back({t + fc.detection_us + fc.action_us, -1, fc.speed_factor});
    emit(t, EventKind::SlowBegin, -1, -1, &fc, fc.speed_factor, strike.slot);
    update_speed();
  }
  if (out_of_job.empty()) return true;
  for (int node : out_of_job) {
    emit(t, EventKind::NodeDown, node);
    departures_.push_back({node_slot_[static_cast<std::size_t>(node)], node, back, 0});
  }
  crash(t, fc, fc.detection_us, true);  // nodes cut off: their memory is out of reach
  return true;
}

}  // namespace ctwin
