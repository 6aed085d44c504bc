// The job master's accounts for people, tests and Prometheus: the nodes by state, the spares, the
// metrics snapshot and the status document (job_master.hpp).
#include <algorithm>

#include "core/wall_clock.hpp"
#include "live/job/job_master.hpp"

namespace ctwin::live {

int JobMaster::spares() const {
  return static_cast<int>(std::count_if(agents_.begin(), agents_.end(), [](const auto& kv) { return kv.second.rank < 0 && !kv.second.evicted; }));
}

int JobMaster::nodes_in(NodeState state) const {
  int n = 0;
  for (const auto& id : slots_) n += !id.empty() && agents_.at(id).status.state == state;
  return n;
}

MetricsSnapshot JobMaster::metrics(Clock::time_point now) const {
  MetricsSnapshot s;
  s.ledger = ledger_.ledger();
  s.uncharged_s = static_cast<double>(std::max<Micros>(ledger_.at(now) - ledger_.marked(), 0)) / 1e6;
  s.rolled_back_us = ledger_.rolled_back_us();
  s.wall_s = static_cast<double>(ledger_.at(now)) / 1e6;
  s.step = book_.step();
  s.checkpoint_step = book_.saved_step();
  s.restarts = budget_.restarts();
  s.trainer_up = phase_ == Phase::Running;
  s.interruptions = interruptions_;
  s.generation = generation_;
  for (const NodeState state : {NodeState::Waiting, NodeState::Running, NodeState::Stopped, NodeState::Finished}) s.nodes[to_string(state)] = nodes_in(state);
  s.nodes["vacant"] = vacancies();
  for (std::size_t r = 0; r < slots_.size(); ++r)
    if (!slots_[r].empty()) s.report_age_s[static_cast<int>(r)] = seconds_between(agents_.at(slots_[r]).last_seen, now);
  s.spares = spares();
  s.storage_failing_nodes = storage_failing_nodes();
  s.storage_alerts = storage_alerts_;
  if (forecast_ && forecast_->known) {
    const RunForecast& f = *forecast_;
    s.forecast = MetricsSnapshot::Forecast{f.goodput_to_date,
                                           {f.remaining_wall_s_p05, f.remaining_wall_s_p50, f.remaining_wall_s_p95},
                                           {f.final_goodput_p05, f.final_goodput_p50, f.final_goodput_p95},
                                           {f.rate_per_day_p05, f.rate_per_day_p50, f.rate_per_day_p95}};
  }
  return s;
}

nlohmann::json JobMaster::status(Clock::time_point now) const {
  static const char* phases[] = {"rendezvous", "gathering", "running", "done"};
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t r = 0; r < slots_.size(); ++r) {
    nlohmann::json n = {{"rank", r}};
    if (!slots_[r].empty()) {
      const Agent& a = agents_.at(slots_[r]);
      n.update({{"agent", a.id}, {"host", a.host}, {"state", to_string(a.status.state)}, {"generation", a.status.generation}, {"step", a.status.step}});
      n["restorable"] = a.status.restorable ? nlohmann::json(*a.status.restorable) : nlohmann::json(nullptr);
    }
    nodes.push_back(n);
  }
  nlohmann::json ledger;
  for (std::size_t c = 0; c < kCategoryCount; ++c) ledger[kCategoryKeys[c]] = static_cast<double>(ledger_.ledger().us[c]) / 1e6;
  return {{"job", o_.job},          {"phase", phases[static_cast<int>(phase_)]}, {"generation", generation_},
          {"restore_step", restore_step_}, {"restarts", budget_.restarts()},            {"step", book_.step()},
          {"nodes", nodes},        {"spares", spares()},                        {"exit_code", exit_code_},
          {"reason", reason_},     {"resumed", resumed_},                       {"wall_s", static_cast<double>(ledger_.at(now)) / 1e6},
          {"ledger", ledger},      {"cause", cause_},                           {"precheck", precheck_status()},
          {"forecast", forecast_status()}, {"incarnation", incarnation_}, {"storage", storage_status()}};
}

}  // namespace ctwin::live
