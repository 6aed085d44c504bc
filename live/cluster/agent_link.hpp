#pragma once
//! The agent's link to the job master (`ctwin live agent`): joins, then reports from its own
//! thread every interval, or at once after a fault or a change of state, and keeps the newest
//! plan for the supervisor (live/supervisor/coordination.hpp). A master that cannot be reached is
//! waited for: the trainer keeps running, the trainer's lines wait in a bounded queue, and an agent
//! the master no longer knows (it restarted without its journal) joins again.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "live/cluster/protocol.hpp"

namespace ctwin::live::cluster {

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

  //! Sends what is pending now, waiting at most `timeout_s` (the agent's last word before it exits).
  void flush(double timeout_s);
  //! Set when the master refused this agent for good (a wrong token): the message.
  std::string refused() const;

 private:
  using Clock = std::chrono::steady_clock;
  void loop();
  bool send_report();
  bool send_join();

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
  std::optional<std::pair<Clock::time_point, FaultReport>> fault_;
  std::string refused_;
  std::thread thread_;
};

}  // namespace ctwin::live::cluster
