// What a node reports beside its state (job_master.hpp): its faults (a health fault first put to the
// controller, which may let it pass), the rows only it sees (logged under its rank), and its storage
// alerts: a persist failing (a full disk, a quota, I/O) or writing again, raised and cleared per node
// in the log, the status and the metrics. A storage alert is never an interruption: training goes on
// from memory while the persister retries.
#include <algorithm>
#include <iostream>

#include "core/wall_clock.hpp"
#include "live/job/job_master.hpp"
#include "live/job/recovery.hpp"

namespace ctwin::live {

void JobMaster::take_fault(Agent& a, const Report& report, Clock::time_point left, Clock::time_point now) {
  const FaultReport& f = *report.fault;
  const Clock::time_point at = left - steady_seconds(f.age_s);
  const std::int64_t ended = f.generation >= 0 ? f.generation : report.status.generation;
  const bool current = phase_ == Phase::Running && ended == generation_;
  std::vector<Act> answer;
  if (f.ask) {  // a health fault the trainer runs through: does it stop the job at all?
    a.answered_fault = std::max(a.answered_fault, f.id);
    if (!current) return;  // the job stops already: the fault that stopped it is the one decided
    for (const auto& act : answer_fault(controller_, view(now), a.rank, f.fault, f.gpu, f.xid)) answer.push_back(act.act);
    if (answer.empty()) {  // let pass: counted, stops nothing; the trainer saves now
      record(std::max(ledger_.at(at), ledger_.marked()), EventKind::Health, f.detail, a.rank, f.xid, f.fault.name);
      ++a.checkpoint_requests;
      return;
    }
  }
  faults_.push_back({a.rank, ended, f, at, a.id, now, false, answer});
  if (current) on_fault(a.rank, f, now);
}

void JobMaster::take_event(const Agent& a, const NodeEvent& e, Clock::time_point left) {
  EventKind kind = e.kind;
  if (!node_may_report(kind)) return;  // the job's own rows are the master's (the wire refuses them too)
  // A node taken out of the job still reports what its command did: under the rank it held.
  const int rank = a.rank >= 0 ? a.rank : a.left_rank;
  std::string note = rank >= 0 ? e.note : "spare " + a.host + ": " + e.note;
  // With spares, the master's own row is the eviction; the node's command is its outcome.
  if (kind == EventKind::Evicted && o_.spares_possible) kind = EventKind::Health, note = "the node's eviction: " + note;
  const Micros at = std::max<Micros>(ledger_.at(left - steady_seconds(e.age_s)), 0);  // when it was seen (the log keeps rows in time order)
  log_.add(at, kind, note, log_node(rank), e.gpu, e.code, e.fault_class, e.speed);
  journal_dirty_ = true;
}

void JobMaster::take_storage(Agent& a, const StorageReport& r, Clock::time_point left) {
  const Micros at = std::max(ledger_.at(left - steady_seconds(r.age_s)), ledger_.marked());
  const bool node_was_failing = !a.storage_failing.empty();
  const std::string where = (a.rank >= 0 ? "node rank " + std::to_string(a.rank) : std::string("a spare")) + " (" + a.host + ") local rank " +
                            std::to_string(r.local_rank);
  if (r.failing) {
    const bool new_spell = !a.storage_failing.count(r.local_rank);
    a.storage_failing[r.local_rank] = r;
    if (!new_spell) return;
    if (!node_was_failing) ++storage_alerts_;
    const std::string why = where + " cannot persist step " + std::to_string(r.step) + ": " + r.detail +
                            "; training goes on from memory, the persister retries";
    std::cerr << "ctwin master: storage: " << why << "\n";
    record(at, EventKind::Health, why, a.rank, -1, "storage");
    return;
  }
  if (!a.storage_failing.erase(r.local_rank)) return;
  const std::string back = where + " persists again (step " + std::to_string(r.step) + " on disk)";
  std::cerr << "ctwin master: storage: " << back << "\n";
  record(at, EventKind::Health, back, a.rank, -1, "storage");
}

int JobMaster::storage_failing_nodes() const {
  return static_cast<int>(std::count_if(agents_.begin(), agents_.end(), [](const auto& kv) { return !kv.second.storage_failing.empty(); }));
}

nlohmann::json JobMaster::storage_status() const {
  nlohmann::json failing = nlohmann::json::array();
  for (const auto& [id, a] : agents_)
    for (const auto& [local_rank, r] : a.storage_failing)
      failing.push_back({{"node_rank", a.rank}, {"host", a.host}, {"local_rank", local_rank}, {"step", r.step}, {"detail", r.detail}});
  return {{"alerts", storage_alerts_}, {"failing", failing}};
}

}  // namespace ctwin::live
