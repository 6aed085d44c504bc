#include "live/cluster/agent_link.hpp"

#include <httplib.h>

#include <iostream>
#include <limits>

namespace ctwin::live::cluster {

namespace {

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

AgentLink::AgentLink(std::string master_host, int master_port, std::string token, JoinRequest join)
    : host_(std::move(master_host)), token_(std::move(token)), port_(master_port), join_(std::move(join)) {
  thread_ = std::thread([this] { loop(); });
}

AgentLink::~AgentLink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::optional<Plan> AgentLink::plan() {
  std::lock_guard lock(mutex_);
  if (!refused_.empty()) {  // refused for good: the supervisor ends
    Plan end;
    end.generation = std::numeric_limits<std::int64_t>::max();
    end.what = PlanKind::Exit;
    end.exit_code = 2;
    end.reason = refused_;
    return end;
  }
  return plan_;
}

void AgentLink::status(const NodeStatus& status) {
  std::lock_guard lock(mutex_);
  const bool changed = status.state != status_.state || status.generation != status_.generation ||
                       (status.restorable && status.restorable != status_.restorable);
  status_ = status;
  if (changed) urgent_ = true, wake_.notify_all();
}

void AgentLink::trainer_line(const std::string& line) {
  std::lock_guard lock(mutex_);
  lines_.emplace_back(Clock::now(), line.substr(0, kLongestLine));
  while (lines_.size() > kMostLines) lines_.pop_front();  // a master away for long: the oldest go
}

void AgentLink::fault(const FaultReport& fault) {
  std::lock_guard lock(mutex_);
  fault_ = {Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(fault.age_s)), fault};
  urgent_ = true;
  wake_.notify_all();
}

std::string AgentLink::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

void AgentLink::flush(double timeout_s) {
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  while (Clock::now() < until) {
    {
      std::lock_guard lock(mutex_);
      if (!refused_.empty() || (!urgent_ && lines_.empty() && !fault_)) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

//! One HTTP exchange with the master; the body of a 200, else nullopt with `status` set (0: unreachable).
static std::optional<std::string> exchange(const std::string& host, int port, const std::string& token, const char* path,
                                           const std::string& body, int& status) {
  httplib::Client client(host, port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  client.set_write_timeout(5, 0);
  const auto res = client.Post(path, {{"Authorization", "Bearer " + token}}, body, "application/json");
  status = res ? res->status : 0;
  if (!res || res->status != 200) {
    if (res && res->status != 404) std::cerr << "ctwin agent: " << path << ": HTTP " << res->status << ": " << res->body << "\n";
    return std::nullopt;
  }
  return res->body;
}

bool AgentLink::send_join() {
  int status = 0;
  const auto body = exchange(host_, port_, token_, "/v1/join", to_json(join_).dump(), status);
  std::lock_guard lock(mutex_);
  if (status == 401 || status == 400) refused_ = "the master refused this agent (HTTP " + std::to_string(status) + ")";
  if (!body) return false;
  try {
    const JoinReply reply = parse_join_reply(*body);
    interval_s_ = reply.report_interval_s;
    joined_ = true;
    urgent_ = true;
    std::cerr << "ctwin agent: joined job " << reply.job << " as "
              << (reply.node_rank >= 0 ? "node rank " + std::to_string(reply.node_rank) : std::string("a spare")) << "\n";
  } catch (const ProtocolError& e) {
    refused_ = std::string("the master's answer is not the protocol: ") + e.what();
  }
  return joined_;
}

bool AgentLink::send_report() {
  Report report;
  std::size_t lines_sent = 0;
  bool with_fault = false;
  {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    report.agent = join_.agent;
    report.status = status_;
    for (const auto& [at, line] : lines_) report.lines.push_back({seconds_between(at, now), line});
    lines_sent = lines_.size();
    if (fault_) {
      report.fault = fault_->second;
      report.fault->age_s = std::max(0.0, seconds_between(fault_->first, now));
      with_fault = true;
    }
    urgent_ = false;
  }
  int status = 0;
  const auto body = exchange(host_, port_, token_, "/v1/report", to_json(report).dump(), status);
  std::lock_guard lock(mutex_);
  if (status == 404) joined_ = false;  // the master does not know this agent: join again
  if (status == 401 || status == 400) refused_ = "the master refused this agent's report (HTTP " + std::to_string(status) + ")";
  if (!body) {
    urgent_ = true;
    return false;
  }
  lines_.erase(lines_.begin(), lines_.begin() + static_cast<std::ptrdiff_t>(std::min(lines_sent, lines_.size())));
  if (with_fault) fault_.reset();
  try {
    plan_ = parse_plan(*body);
  } catch (const ProtocolError& e) {
    refused_ = std::string("the master's plan is not the protocol: ") + e.what();
  }
  return true;
}

void AgentLink::loop() {
  double backoff_s = 0.1;
  for (;;) {
    bool joined = false;
    {
      std::unique_lock lock(mutex_);
      if (stopping_ || !refused_.empty()) return;
      joined = joined_;
    }
    const bool ok = joined ? send_report() : send_join();
    std::unique_lock lock(mutex_);
    if (stopping_ || !refused_.empty()) return;
    backoff_s = ok ? 0.1 : std::min(backoff_s * 2, interval_s_);
    const double wait_s = ok ? interval_s_ : backoff_s;
    wake_.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return stopping_ || (urgent_ && ok); });
  }
}

}  // namespace ctwin::live::cluster
