// The job master's storage alerts: a node's persist failing (a full disk, a quota, I/O) or writing
// again, raised and cleared per node in the log, the status and the metrics (job_master.hpp). Never
// an interruption: training goes on from memory while the persister retries.
#include <algorithm>
#include <iostream>

#include "live/job/job_master.hpp"

namespace ctwin::live {

namespace {

JobMaster::Clock::duration seconds(double s) {
  return std::chrono::duration_cast<JobMaster::Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

void JobMaster::take_storage(Agent& a, const StorageReport& r, Clock::time_point left) {
  const Micros at = std::max(ledger_.at(left - seconds(r.age_s)), ledger_.marked());
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
