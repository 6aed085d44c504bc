#include "live/cluster/agent_link.hpp"

#include "core/atomic_file.hpp"
#include "core/wall_clock.hpp"

#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>

namespace ctwin::live::cluster {

std::string remembered_run(const std::string& memory_path, const std::string& persist_dir) {
  for (const std::string& path : {memory_path, persist_dir.empty() ? std::string() : persist_dir + "/ctwin-run"}) {
    std::string run;
    if (std::ifstream in(path); !path.empty() && in && std::getline(in, run) && !run.empty() && run.size() <= 256) return run;
  }
  return {};
}

void AgentLink::remember_run_in(std::string path) {
  std::lock_guard lock(mutex_);
  memory_path_ = std::move(path);
}

AgentLink::AgentLink(std::string master_host, int master_port, std::string token, JoinRequest join)
    : host_(std::move(master_host)), token_(std::move(token)), port_(master_port), join_(std::move(join)) {
  open_datagrams();
  thread_ = std::thread([this] { loop(); });
  if (udp_ >= 0) beats_ = std::thread([this] { beat(); });
}

void AgentLink::tell_news(bool by_http) {
  urgent_ |= by_http;
  news_pending_ = true;
  wake_.notify_all();
  if (news_[1] >= 0) [[maybe_unused]] const auto sent = ::write(news_[1], "!", 1);
}

void AgentLink::open_datagrams() {
  if (::pipe2(news_, O_CLOEXEC | O_NONBLOCK) != 0) news_[0] = news_[1] = -1;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found) != 0 || !found) return;
  udp_ = ::socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (udp_ >= 0 && ::connect(udp_, found->ai_addr, found->ai_addrlen) != 0) ::close(udp_), udp_ = -1;  // then HTTP only
  ::freeaddrinfo(found);
}

bool AgentLink::heartbeat_will_do() const {
  if (udp_ < 0 || !joined_ || !plan_ || plan_stale_ || urgent_ || !faults_.empty() || !lines_.empty() || !sections_.empty() || precheck_result_ ||
      !storage_.empty() || !events_.empty())
    return false;
  if (Clock::now() - reported_at_ > std::chrono::minutes(5)) return false;  // a full report now and then
  if (status_.state == NodeState::Running || status_.state == NodeState::Finished) return !status_.restorable;
  return status_.generation == reported_.generation && status_.state == reported_.state && status_.restorable == reported_.restorable &&
         status_.node_rank == reported_.node_rank;
}

void AgentLink::send_heartbeat() {
  Heartbeat h;
  {
    std::lock_guard lock(mutex_);
    news_pending_ = false;
    // With node rank 0's lines (or a fault) still to go by HTTP, or on their way in a report not
    // yet answered, a datagram says only what the master has acknowledged: else the master hears
    // "finished" before the last steps, and the job's ledger ends without them (391 of 400 steps,
    // a spare job under Slurm; the datagram overtook the report carrying them).
    const NodeStatus& said = (lines_.empty() && faults_.empty()) || !acknowledged_ ? status_ : *acknowledged_;
    // Before its first plan (its report starved behind a flood, say) the node beats all the same: the
    // master's answer sends it for the plan, and meanwhile it is not silent.
    if (plan_) h = {join_.agent, ++seq_, said.generation, said.state, said.step, plan_->generation, plan_->what, plan_->cadence.revision, plan_->incarnation};
    else h = {join_.agent, ++seq_, said.generation, said.state, said.step, 0, PlanKind::Wait, 0, joined_incarnation_};
  }
  const std::string datagram = encode(h, token_);
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s_));
  if (::send(udp_, datagram.data(), datagram.size(), 0) < 0) {  // refused earlier: HTTP, with its back-off
    std::unique_lock lock(mutex_);
    urgent_ = true;
    wake_.notify_all();
    wake_.wait_until(lock, until, [&] { return stopping_; });  // the next datagram an interval later, not in a spin
    return;
  }
  // The master answers only when this node's plan changed (or it does not know this agent). The
  // wait for an answer is the interval's wait, cut short by an answer or by news from the node.
  char buffer[kLargestDatagram + 1];
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_ || news_pending_) return;
    }
    pollfd ready[2] = {{udp_, POLLIN, 0}, {news_[0], POLLIN, 0}};
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    if (::poll(ready, news_[0] >= 0 ? 2 : 1, static_cast<int>(std::min<long long>(left_ms, 1000))) <= 0) continue;
    if (ready[1].revents & POLLIN)
      while (::read(news_[0], buffer, sizeof buffer) > 0) {
      }
    if (ready[0].revents & (POLLERR | POLLHUP)) {
      // Nothing listens at the master's port (ICMP refused): a master away or restarting. The
      // error is taken off the socket (else poll reports it at once, and the wait spins a core)
      // and the reports go by HTTP, which backs off and joins again when the master returns.
      [[maybe_unused]] const ssize_t cleared = ::recv(udp_, buffer, sizeof buffer, MSG_DONTWAIT);
      std::lock_guard lock(mutex_);
      urgent_ = true;
      wake_.notify_all();
      continue;  // the interval's wait goes on: no datagram sooner than one an interval
    }
    if (!(ready[0].revents & POLLIN)) continue;
    const ssize_t n = ::recv(udp_, buffer, sizeof buffer, 0);
    if (n <= 0) continue;
    const auto answer = decode_answer(std::string(buffer, static_cast<std::size_t>(n)), token_);
    if (!answer || answer->agent != join_.agent) continue;
    std::lock_guard lock(mutex_);
    if (answer->unknown) joined_ = false;  // join again, by HTTP
    else plan_stale_ = true;               // fetch the new plan, by HTTP
    urgent_ = true;
    wake_.notify_all();
  }
}

//! The heartbeat thread: a datagram every interval while joined (a plan in hand or not), whatever the
//! reports do. A report that waits on a slow or flooded master never silences the node.
void AgentLink::beat() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (stopping_ || !refused_.empty()) return;
      const auto due = http_ok_at_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s_));
      // A report that got through is this interval's sign of life; news from the node goes at once.
      if (!joined_) {  // nothing to beat for yet: the report thread joins, and says so
        // No timeout: 10,000 agents polling for it at 5 Hz starved their master on two cores.
        wake_.wait(lock, [&] { return stopping_ || !refused_.empty() || joined_; });
        continue;
      }
      if (!news_pending_ && Clock::now() < due) {
        wake_.wait_until(lock, due, [&] { return stopping_ || news_pending_; });
        continue;
      }
    }
    send_heartbeat();  // it waits the interval (or less, when there is news)
  }
}

AgentLink::~AgentLink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    tell_news(false);
  }
  thread_.join();
  if (beats_.joinable()) beats_.join();
  if (udp_ >= 0) ::close(udp_);
  for (const int fd : news_)
    if (fd >= 0) ::close(fd);
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
  const bool changed = status.state != status_.state || status.generation != status_.generation || status.node_rank != status_.node_rank ||
                       (status.restorable && status.restorable != status_.restorable);
  status_ = status;
  // A stop says what it holds, by HTTP; running or finished can go in a datagram, but now.
  const bool by_http = status.state == NodeState::Stopped || status.state == NodeState::Waiting || status.restorable;
  if (changed) tell_news(by_http);
}

void AgentLink::trainer_line(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (plan_ && plan_->node_rank != 0) return;  // only node rank 0's lines keep the job's ledger
  lines_.emplace_back(Clock::now(), line.substr(0, kLongestLine));
  while (lines_.size() > kMostLines) lines_.pop_front();  // a master away for long: the oldest go
}

void AgentLink::fault(const FaultReport& fault) {
  std::lock_guard lock(mutex_);
  faults_.emplace_back(Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(fault.age_s)), fault);
  while (faults_.size() > 16) faults_.pop_front();  // a master away for long: the oldest go
  tell_news(true);
}

void AgentLink::event(const NodeEvent& event) {
  std::lock_guard lock(mutex_);
  events_.emplace_back(Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(event.age_s)), event);
  while (events_.size() > kMostEvents) events_.pop_front();
  tell_news(true);
}

void AgentLink::storage(const StorageReport& report) {
  std::lock_guard lock(mutex_);
  storage_.emplace_back(Clock::now(), report);
  while (storage_.size() > 64) storage_.pop_front();  // a master away for long: the oldest go
  tell_news(true);
}

void AgentLink::sections(const std::vector<RankSection>& sections) {
  std::lock_guard lock(mutex_);
  sections_ = sections;
  tell_news(true);
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
      if (!refused_.empty() || (!urgent_ && lines_.empty() && faults_.empty() && events_.empty())) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::optional<std::string> post_to_master(const std::string& host, int port, const std::string& token, const char* path,
                                          const std::string& body, int& status) {
  httplib::Client client(host, port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(5, 0);
  client.set_write_timeout(5, 0);
  client.set_tcp_nodelay(true);  // headers and body leave at once (no 40 ms Nagle stall)
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
  const auto body = post_to_master(host_, port_, token_, "/v1/join", to_json(join_).dump(), status);
  std::lock_guard lock(mutex_);
  last_status_ = status;
  if (status == 401 || status == 400) refused_ = "the master refused this agent (HTTP " + std::to_string(status) + ")";
  if (!body) return false;
  try {
    const JoinReply reply = parse_join_reply(*body);
    interval_s_ = reply.report_interval_s;
    joined_incarnation_ = reply.incarnation;
    joined_ = true;
    urgent_ = true;
    wake_.notify_all();  // the heartbeats begin with the first contact, not the first plan
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
  NodeStatus sent;
  bool with_fault = false;
  {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    report.agent = join_.agent;
    report.sent_us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();  // with the ages below
    report.status = status_;
    reported_ = sent = status_;
    reported_at_ = now;
    for (const auto& [at, line] : lines_) report.lines.push_back({seconds_between(at, now), line});
    report.sections = std::move(sections_);
    sections_.clear();
    report.precheck = precheck_result_;
    lines_sent = lines_.size();
    for (const auto& [at, r] : storage_) {
      report.storage.push_back(r);
      report.storage.back().age_s = seconds_between(at, now);
    }
    for (const auto& [at, e] : events_) {
      report.events.push_back(e);
      report.events.back().age_s = std::max(0.0, seconds_between(at, now));
    }
    if (!faults_.empty()) {
      report.fault = faults_.front().second;
      report.fault->age_s = std::max(0.0, seconds_between(faults_.front().first, now));
      with_fault = true;
    }
    urgent_ = faults_.size() > 1;  // the next fault goes at once too
  }
  int status = 0;
  const auto body = post_to_master(host_, port_, token_, "/v1/report", to_json(report).dump(), status);
  std::lock_guard lock(mutex_);
  last_status_ = status;
  if (status == 404) joined_ = false;  // the master does not know this agent: join again
  if (status == 401 || status == 400) refused_ = "the master refused this agent's report (HTTP " + std::to_string(status) + ")";
  if (!body) {
    urgent_ = true;
    return false;
  }
  lines_.erase(lines_.begin(), lines_.begin() + static_cast<std::ptrdiff_t>(std::min(lines_sent, lines_.size())));
  storage_.erase(storage_.begin(), storage_.begin() + static_cast<std::ptrdiff_t>(std::min(report.storage.size(), storage_.size())));
  events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(std::min(report.events.size(), events_.size())));
  acknowledged_ = sent;
  if (with_fault && !faults_.empty()) faults_.pop_front();
  if (report.precheck && precheck_result_ && precheck_result_->key == report.precheck->key) precheck_result_.reset();
  try {
    plan_ = parse_plan(*body);
    plan_stale_ = false;
    if (!memory_path_.empty() && plan_->node_rank >= 0 && !plan_->run.empty() && plan_->run != remembered_run_) {
      remembered_run_ = plan_->run;
      try {
        write_file_atomically(memory_path_, remembered_run_ + "\n");
      } catch (const std::exception& e) {  // the node serves on; only a fast return is lost
        std::cerr << "ctwin agent: cannot remember the run in " << memory_path_ << ": " << e.what() << "\n";
      }
    }
    wake_.notify_all();  // the heartbeat thread waits for the first plan
  } catch (const ProtocolError& e) {
    refused_ = std::string("the master's plan is not the protocol: ") + e.what();
  }
  if (plan_ && plan_->what == PlanKind::Precheck && plan_->precheck && plan_->precheck->key != precheck_started_ && start_precheck_) {
    precheck_started_ = plan_->precheck->key;
    start_precheck_(*plan_->precheck);  // it only queues the task
  }
  return true;
}

void AgentLink::on_precheck(std::function<void(const PrecheckTask&)> start) {
  std::lock_guard lock(mutex_);
  start_precheck_ = std::move(start);
}

void AgentLink::precheck_done(const NodeCheck& result) {
  std::lock_guard lock(mutex_);
  precheck_result_ = result;
  tell_news(true);
}

void AgentLink::note_unreachable() {
  const auto now = Clock::now();
  const bool first = !unreachable_since_;
  if (first) unreachable_since_ = now;
  char since[32];
  std::snprintf(since, sizeof since, "%.0f", seconds_between(*unreachable_since_, now));
  unreachable_ = "no answer from the master at " + host_ + ":" + std::to_string(port_) + " for " + since + " s (" +
                 (last_status_ == 0 ? std::string("no connection: is it up, and does its name resolve?") : "HTTP " + std::to_string(last_status_)) +
                 "); still trying";
  if (!first && now - unreachable_said_ < std::chrono::seconds(30)) return;
  unreachable_said_ = now;
  std::cerr << "ctwin agent: " << unreachable_ << "\n";
}

std::string AgentLink::unreachable() const {
  std::lock_guard lock(mutex_);
  return unreachable_;
}

//! The report thread: by HTTP whenever there is more to say than the heartbeats say (a join, a
//! fault, a stop with its steps, trainer lines, a plan to fetch), at most once an interval unless urgent.
void AgentLink::loop() {
  double backoff_s = 0.1;
  for (;;) {
    bool joined = false, datagrams_will_do = false;
    {
      std::unique_lock lock(mutex_);
      if (stopping_ || !refused_.empty()) return;
      joined = joined_;
      datagrams_will_do = heartbeat_will_do();
      if (datagrams_will_do) {
        wake_.wait_for(lock, std::chrono::duration<double>(interval_s_), [&] { return stopping_ || urgent_; });
        continue;
      }
    }
    const bool ok = joined ? send_report() : send_join();
    std::unique_lock lock(mutex_);
    if (stopping_ || !refused_.empty()) return;
    if (ok) unreachable_since_.reset(), unreachable_.clear(), http_ok_at_ = Clock::now();
    else note_unreachable();
    backoff_s = ok ? 0.1 : std::min(backoff_s * 2, interval_s_);
    const double wait_s = ok ? interval_s_ : backoff_s;
    wake_.wait_for(lock, std::chrono::duration<double>(wait_s), [&] { return stopping_ || (urgent_ && ok); });
  }
}

}  // namespace ctwin::live::cluster
