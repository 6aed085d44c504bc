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
  pool_.fill(config_.shop.hot_count, config_.shop.hot_swap_us, [&](int node, Micros swap_us) {
    pending_action_us_ = std::max(pending_action_us_, swap_us);
    emit(t, EventKind::SpareAssigned, node);
  });
  consult_pool(t);
}

//! When a node sent for repair comes back, if ever: triage, manual repair (fixed or lognormal),
//! and an RMA when the repair fails; a node that failed too often is retired instead.
Micros Trial::repair_turnaround(int node, Micros t, bool& retired) {
  const RepairShop& shop = config_.shop;
  retired = false;
  // Retired at its N-th failure within the window: when its N most recent all fall inside it.
  if (pool_.failed_too_often(node, t - shop.retire_within_us)) {
    retired = true;
    return kNever;
  }
  Micros repair = shop.triage_us + config_.repair_us;
  if (shop.repair_median_us > 0) {
    const double draw = boost::random::lognormal_distribution<double>(std::log(shop.repair_median_us), shop.repair_sigma)(shop_rng_);
    repair = shop.triage_us + static_cast<Micros>(std::llround(std::min(draw, 1e15)));
  } else if (shop.repair_mean_us > 0) {
    const double draw = boost::random::exponential_distribution<double>(1.0 / shop.repair_mean_us)(shop_rng_);
    repair = shop.triage_us + static_cast<Micros>(std::llround(std::min(draw, 1e15)));
  }
  const bool failed = shop.failure_probability > 0 && boost::random::bernoulli_distribution<double>(shop.failure_probability)(shop_rng_);
  if (failed) repair += shop.rma_us;
  // A repair that works may mend a lemon for good (a reseated part, a swapped board).
  if (!failed && shop.lemon_cure_probability > 0 &&
      boost::random::bernoulli_distribution<double>(shop.lemon_cure_probability)(shop_rng_))
    cured_.push_back(node);
  return t + repair;
}

void Trial::send_away_departures(Micros t) {
  for (const Departure& d : departures_) {
    departing_[static_cast<std::size_t>(d.node)] = false;
    if (pool_.node_in_slot(d.slot) != d.node) continue;  // already out
    pool_.vacate(d.slot, d.node, d.swap_us);
    if (d.back == kNever) {
      bool retired = false;
      const Micros back = repair_turnaround(d.node, t, retired);
      emit(t, retired ? EventKind::Retired : EventKind::ToRepair, d.node);
      if (!retired) pool_.schedule_return(back, d.node, true);
    } else {
      pool_.schedule_return(std::max(d.back, t), d.node);  // back with its network part
    }
    // A node that was rebooting and is now out comes back through the repair shop or its part instead.
    rebooting_.erase(d.node);
  }
  departures_.clear();
}

void Trial::leave_diagnosis(Micros t) {
  if (precheck_pending_) run_precheck(t);
  send_away_departures(t);
  fill_vacancies(t);
  if (config_.quorum) {  // replicas with a vacancy stay out: the others restart
    quorum_vacancies(t, 0);
    rejoin_due(t);
  }
  if (pool_.vacancies() > 0 && !config_.quorum) consult_shortage(t);
  // The job restarts anyway: replicas that can come back cost nothing extra.
  if (pool_.vacancies() == 0 && active_replicas_ < total_replicas_ && consult_grow(t, 0)) grow(t, grow_by_);
  if (pool_.vacancies() == 0 || (config_.quorum && active_replicas_ > 0)) {
    begin_restart(t);
    return;
  }
  emit(t, EventKind::WaitingForSpare);
  enter(Phase::WaitSpare, t, kNever);
}

//! A remap goes pending (Xid 63) at once for a double-bit error, at the after-th correctable one.
void Trial::request_remap(std::int64_t part, const FaultClass& fc) {
  if (fc.remap->after > 1) {
    auto seen = std::find_if(correctable_.begin(), correctable_.end(), [part](const auto& c) { return c.first == part; });
    if (seen == correctable_.end()) seen = correctable_.insert(correctable_.end(), {part, 0});
    if (++seen->second % fc.remap->after != 0) return;
  }
  if (std::none_of(remaps_pending_.begin(), remaps_pending_.end(), [part](const auto& r) { return r.first == part; }))
    remaps_pending_.emplace_back(part, static_cast<std::uint32_t>(&fc - config_.faults.data()));
}

bool Trial::apply_remaps(Micros t, int node, int gpu, bool whole_node, Micros& replace_us) {
  bool failed = false;
  for (auto it = remaps_pending_.begin(); it != remaps_pending_.end();) {
    const bool cleared = it->first / 256 == node && (whole_node || it->first % 256 == std::max(gpu, 0));
    if (!cleared) {
      ++it;
      continue;
    }
    const FaultClass& fc = config_.faults[it->second];
    auto used = std::find_if(rows_used_.begin(), rows_used_.end(), [&](const auto& r) { return r.first == it->first; });
    if (used == rows_used_.end()) used = rows_used_.insert(rows_used_.end(), {it->first, 0});
    const bool exhausted = ++used->second > fc.remap->spare_rows;
    if (exhausted || (fc.remap->failure_probability > 0 &&
                      boost::random::bernoulli_distribution<double>(fc.remap->failure_probability)(shop_rng_))) {
      failed = true;
      replace_us = std::max(replace_us, fc.remap->replace_us);
      if (observer_) {  // Xid 64, a row remapping failure, on the GPU that had the remap pending
        RunEvent e;
        e.time = t;
        e.node = node;
        e.gpu = static_cast<std::int32_t>(it->first % 256);
        e.kind = EventKind::Escalated;
        e.code = 64;
        e.fault_class = static_cast<std::int32_t>(it->second);
        observer_->on_event(e);
      }
    }
    it = remaps_pending_.erase(it);
  }
  return failed;
}

//! The part that failed: its action (escalated when it keeps failing) and what happens to its node.
Trial::Stopped Trial::stop_part(Micros t, const FaultClass& fc, int slot, int node, int gpu) {
  Act action = fc.action;
  Micros action_us = fc.action_us;
  if (fc.escalation) {
    const std::int64_t part = static_cast<std::int64_t>(node) * 256 + std::max(gpu, 0);
    auto& recent = recent_faults_[static_cast<std::size_t>(&fc - config_.faults.data())];
    Micros oldest = 0;
    // `after` faults within the window: the oldest of the part's newest `after` is in it.
    if (recent.add(part, t, oldest) >= fc.escalation->after && oldest >= t - fc.escalation->within_us) {
      action = fc.escalation->action;
      action_us = fc.escalation->action_us;
      recent.clear(part);
      emit(t, EventKind::Escalated, node, gpu, &fc);
    }
  }
  if (config_.controller) consult_fault(t, fc, node, gpu, action, action_us);
  const std::int64_t gpu_part = static_cast<std::int64_t>(node) * 256 + std::max(gpu, 0);
  if (fc.remap) request_remap(gpu_part, fc);
  if (action == Act::ResetGpu || action == Act::Reboot) {
    Micros replace_us = 0;
    if (apply_remaps(t, node, gpu, action == Act::Reboot, replace_us)) {
      action = Act::Replace;  // Xid 64: the GPU goes for RMA
      action_us = replace_us;
    }
  }
  if (action == Act::Replace) {  // new hardware: nothing pending, every spare row back
    auto on_node = [node](const auto& r) { return r.first / 256 == node; };
    remaps_pending_.erase(std::remove_if(remaps_pending_.begin(), remaps_pending_.end(), on_node), remaps_pending_.end());
    rows_used_.erase(std::remove_if(rows_used_.begin(), rows_used_.end(), on_node), rows_used_.end());
    correctable_.erase(std::remove_if(correctable_.begin(), correctable_.end(), on_node), correctable_.end());
  }
  if (action == Act::Reboot) {
    emit(t, EventKind::NodeDown, node);
    rebooting_.insert(node);
  }
  if (action != Act::Replace) {
    pending_action_us_ = std::max(pending_action_us_, action_us);
    return {action == Act::Reboot, action};
  }
  // Replace: the node leaves after the diagnosis, and a spare swaps in (action_us, unless warm).
  // The diagnosis may blame the wrong node: that one is replaced, and the bad one fails again.
  const RepairShop& shop = config_.shop;
  if (shop.misdiagnosis_probability > 0 && config_.job_nodes > 1 &&
      boost::random::bernoulli_distribution<double>(shop.misdiagnosis_probability)(shop_rng_)) {
    int wrong = boost::random::uniform_int_distribution<int>(0, config_.job_nodes - 2)(shop_rng_);
    if (wrong >= slot) ++wrong;
    const int blamed = pool_.node_in_slot(wrong);
    if (blamed >= 0) {
      emit(t, EventKind::Misdiagnosed, blamed, -1, &fc);
      emit(t, EventKind::NodeDown, blamed);
      depart({wrong, blamed, kNever, action_us});
      const auto delay = boost::random::exponential_distribution<double>(1.0)(shop_rng_) *
                         static_cast<double>(shop.recurrence_mean_us);
      recurrences_.push({t + static_cast<Micros>(std::llround(std::min(delay, 1e15))),
                              static_cast<std::uint32_t>(&fc - config_.faults.data()), node, gpu});
      return {true, action};
    }
  }
  emit(t, EventKind::NodeDown, node);
  depart({slot, node, kNever, action_us});
  return {true, action};
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
    if (pool_.in_job(node)) out_of_job.push_back(node);
    else if (pool_.hold_spare(node, back)) emit(now_, EventKind::NodeDown, node);
  }
  bool slows = fc.effect == Effect::Slow && domain.slows_everyone;
  int rail_nodes = 0;
  for (int node : domain.nodes_degraded) rail_nodes += pool_.in_job(node) ? 1 : 0;
  slows |= rail_nodes > 0;
  if (out_of_job.empty() && !slows) {
    emit(t, EventKind::FaultIgnored, -1, -1, &fc, 1.0, strike.slot);
    return false;
  }
  emit(t, EventKind::Fault, -1, -1, &fc, 1.0, strike.slot);
  if (slows) {
    const bool rail_leaf = fc.rate.component == Component::Leaf && !domain.nodes_degraded.empty();
    add_slow({t + fc.detection_us + fc.action_us, -1, fc.speed_factor, fc.rate.component == Component::Spine, rail_nodes, rail_leaf});
    emit(t, EventKind::SlowBegin, -1, -1, &fc, fc.speed_factor, strike.slot);
    update_speed();
  }
  if (out_of_job.empty()) return true;
  for (int node : out_of_job) {
    emit(t, EventKind::NodeDown, node);
    depart({pool_.slot_of(node), node, back, 0});
  }
  crash(t, fc, fc.action, fc.detection_us, true, static_cast<int>(out_of_job.size()));  // nodes cut off: their memory is out of reach
  return true;
}

}  // namespace ctwin
