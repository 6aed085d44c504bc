#pragma once
//! The agent's link to the job master (`ctwin live agent`): joins, then reports from its own
//! thread at most every interval, or at once after a fault or a change of state, and keeps the
//! newest plan for the supervisor (live/job/coordination.hpp). A second thread sends the
//! heartbeats from the join on, one UDP datagram an interval (heartbeat_datagram.hpp), so a report held up by a
//! slow or flooded master never silences the node; the master answers a datagram only when this
//! node's plan changed, and the link then reports by HTTP to fetch it. Only node rank 0's
//! trainer lines are sent (the master keeps the job's ledger from them). A master that cannot be reached is
//! waited for: the trainer keeps running, the trainer's lines wait in a bounded queue, and an agent
//! the master no longer knows (it restarted without its journal) joins again.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "live/cluster/heartbeat_datagram.hpp"
#include "live/cluster/protocol.hpp"
#include "live/job/coordination.hpp"

namespace ctwin::live::cluster {

//! One HTTP POST to the master; the body of a 200, else nullopt with `status` set (0: unreachable).
std::optional<std::string> post_to_master(const std::string& host, int port, const std::string& token, const char* path,
                                          const std::string& body, int& status);

//! The run a node served (AgentLink::remember_run_in's file, else the persist folder's claim,
//! live/supervisor/job_launch.hpp); empty when neither says.
std::string remembered_run(const std::string& memory_path, const std::string& persist_dir);

class AgentLink final : public Coordination {
 public:
  AgentLink(std::string master_host, int master_port, std::string token, JoinRequest join);
  ~AgentLink() override;
  AgentLink(const AgentLink&) = delete;
  AgentLink& operator=(const AgentLink&) = delete;

  std::optional<Plan> plan() override;
  void status(const NodeStatus& status) override;
  void trainer_line(const std::string& line) override;
  void fault(const FaultReport& fault) override;
  void sections(const std::vector<RankSection>& sections) override;

  //! Called on the link's thread with each new precheck task the master hands this node; it must
  //! not block (it starts the node's check, whose result comes back by precheck_done).
  void on_precheck(std::function<void(const PrecheckTask&)> start);
  void precheck_done(const NodeCheck& result) override;
  void storage(const StorageReport& report) override;
  void event(const NodeEvent& event) override;

  //! Each run the master gives this node a rank in is written to `path` (atomically): an agent
  //! started again on this node says it when it joins, and takes its rank back at once.
  void remember_run_in(std::string path);
  //! Sends what is pending now, waiting at most `timeout_s` (the agent's last word before it exits).
  void flush(double timeout_s);
  //! Set when the master refused this agent for good (a wrong token): the message.
  std::string refused() const;
  //! Set while the master does not answer (not up yet, a name that does not resolve, gone): since
  //! when and why, as said on stderr at once and every 30 s after.
  std::string unreachable() const;

 private:
  using Clock = std::chrono::steady_clock;
  void loop();
  void beat();
  bool send_report();
  bool send_join();
  //! Whether this round's report may be a datagram: joined, a plan in hand, nothing new to say.
  bool heartbeat_will_do() const;
  void send_heartbeat();
  void open_datagrams();
  //! With the lock held, after a join or report that got no answer.
  void note_unreachable();

  std::string host_, token_;
  int port_;
  JoinRequest join_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool joined_ = false, stopping_ = false, urgent_ = false;
  double interval_s_ = 1;
  NodeStatus status_;
  std::optional<Plan> plan_;
  std::deque<std::pair<Clock::time_point, std::string>> lines_;
  //! Faults not yet acknowledged, one a report: a second one (a crash after a health fault asked
  //! about) waits for the first to be taken rather than replace it.
  std::deque<std::pair<Clock::time_point, FaultReport>> faults_;
  std::vector<RankSection> sections_;  //!< to go with the next report
  std::deque<std::pair<Clock::time_point, StorageReport>> storage_;  //!< persist outcomes not yet acknowledged
  std::deque<std::pair<Clock::time_point, NodeEvent>> events_;        //!< rows for the job's log not yet acknowledged
  std::function<void(const PrecheckTask&)> start_precheck_;
  std::string precheck_started_;        //!< the newest task's key
  std::optional<NodeCheck> precheck_result_;
  std::string refused_;
  int last_status_ = 0;                 //!< the last join's or report's HTTP status (0: no connection)
  std::optional<Clock::time_point> unreachable_since_;
  Clock::time_point unreachable_said_{};
  std::string unreachable_;
  NodeStatus reported_;                 //!< the status the last HTTP report carried
  std::optional<NodeStatus> acknowledged_;  //!< the status of the last report the master answered: what a datagram may repeat while news waits for HTTP
  Clock::time_point reported_at_{};
  Clock::time_point http_ok_at_{};      //!< the last join or report that got through
  bool plan_stale_ = false;             //!< a datagram answer said the plan changed
  int udp_ = -1;
  int news_[2] = {-1, -1};              //!< a pipe: news from the node cuts a heartbeat's wait short
  std::uint64_t seq_ = 0;
  std::int64_t joined_incarnation_ = 0;  //!< the master's, from the join: heartbeats before the first plan carry it
  std::string memory_path_, remembered_run_;
  //! With the lock held: wake the link now; `by_http`: what changed needs a report, not a datagram.
  void tell_news(bool by_http);
  bool news_pending_ = false;
  std::thread thread_;  //!< joins and reports
  std::thread beats_;   //!< heartbeats
};

}  // namespace ctwin::live::cluster
