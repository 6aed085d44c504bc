// Elastic shrink and regrow, live (DESIGN §6, policies.elastic): the same RecoveryController the
// simulator's trial asks decides. With ranks vacant and no spare it may drop whole data-parallel
// replicas: the nodes left take node ranks 0..width-1 (torchrun wants them contiguous), the others
// become spares, and the job restarts with the smaller WORLD_SIZE. While it runs shrunk and whole
// replicas of spares are idle, it may grow back, by a planned stop at the next checkpoint.
#include <algorithm>
#include <iostream>

#include "live/job/job_master.hpp"

namespace ctwin::live {

std::int64_t JobMaster::remaining_steps() const {
  return o_.total_steps > 0 ? std::max<std::int64_t>(o_.total_steps - book_.step(), 0) : std::max<std::int64_t>(book_.step(), 1);
}

//! The job runs `active_replicas_` of its replicas from now: the ledger's share, the log's row.
void JobMaster::width_changed(EventKind kind, Clock::time_point now) {
  const double share = static_cast<double>(active_replicas_) / total_replicas_;
  book_.set_share(share);
  RunEvent e;
  e.time = ledger_.at(now);
  e.kind = kind;
  e.speed = share;
  e.component = active_replicas_;
  log_.add(e, {});
  journal_dirty_ = true;
}

bool JobMaster::try_to_shrink(Clock::time_point now) {
  control::Event shortage;
  shortage.time_s = static_cast<double>(ledger_.at(now)) / 1e6;
  shortage.signal = control::Signal::SpareShortage;
  std::vector<control::Action> actions;
  controller_.decide(shortage, view(now), actions);
  int drop = 0;
  for (const auto& a : actions)
    if (a.act == Act::Shrink) drop += a.replicas;
  if (drop <= 0) return false;
  // The nodes present, in rank order, take the first ranks; whoever is left over waits as a spare.
  std::vector<std::string> present;
  for (int r = 0; r < width(); ++r)
    if (!slots_[static_cast<std::size_t>(r)].empty()) present.push_back(slots_[static_cast<std::size_t>(r)]);
  active_replicas_ = std::max(1, active_replicas_ - drop);
  std::fill(slots_.begin(), slots_.end(), std::string());
  for (std::size_t i = 0; i < present.size(); ++i) {
    Agent& a = agents_.at(present[i]);
    if (static_cast<int>(i) < width()) {
      if (a.rank != static_cast<int>(i)) a.took_rank_in = generation_;  // it says what it holds for its new rank
      a.rank = static_cast<int>(i);
      slots_[i] = a.id;
    } else {
      a.rank = -1;
    }
  }
  width_changed(EventKind::Shrunk, now);
  std::cerr << "ctwin master: no spare: the job shrinks to " << active_replicas_ << " of " << total_replicas_ << " replicas (" << width()
            << " nodes)\n";
  return vacancies() == 0;
}

void JobMaster::consider_growing(Clock::time_point now) {
  if (phase_ != Phase::Running || grow_by_ > 0 || active_replicas_ >= total_replicas_ || spares() < replica_nodes_) return;
  control::Event returned;
  returned.time_s = static_cast<double>(ledger_.at(now)) / 1e6;
  returned.signal = control::Signal::NodeReturned;
  control::ClusterView v = view(now);
  v.step_s = book_.step_s();
  v.remaining_s = static_cast<double>(remaining_steps()) * v.step_s;
  v.restart_cost_s = last_restart_s_;
  std::vector<control::Action> actions;
  controller_.decide(returned, v, actions);
  for (const auto& a : actions)
    if (a.act == Act::Grow) grow_by_ += a.replicas;
  if (grow_by_ > 0) {
    record(ledger_.marked(), EventKind::Health, "spares are back: the job grows by " + std::to_string(grow_by_) + " replicas at its next checkpoint");
    std::cerr << "ctwin master: the job grows by " << grow_by_ << " replicas at its next checkpoint\n";
  }
}

void JobMaster::grow(Clock::time_point now) {
  active_replicas_ = std::min(total_replicas_, active_replicas_ + grow_by_);
  grow_by_ = 0;
  width_changed(EventKind::Grown, now);
  std::cerr << "ctwin master: the job grows to " << active_replicas_ << " of " << total_replicas_ << " replicas (" << width() << " nodes)\n";
}

}  // namespace ctwin::live
