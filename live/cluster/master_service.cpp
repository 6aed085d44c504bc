#include "live/cluster/master_service.hpp"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <stdexcept>
#include <thread>

#include "live/cluster/heartbeat_datagram.hpp"

namespace ctwin::live::cluster {

bool same_secret(const std::string& a, const std::string& b) {
  unsigned char differ = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    differ |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
  return differ == 0;
}

namespace {

HttpAnswer error(int status, const std::string& what) { return {status, nlohmann::json{{"error", what}}.dump()}; }

}  // namespace

HttpAnswer MasterService::route(const HttpRequest& req) {
  const auto now = [] { return JobMaster::Clock::now(); };
  const bool post = req.method == "POST";
  try {
    if (post && req.target == "/v1/join") {
      const JoinRequest request = parse_join_request(req.body);
      std::lock_guard lock(mutex_);
      return {200, to_json(master_.join(request, now())).dump()};
    }
    if (post && req.target == "/v1/report") {
      const Report report = parse_report(req.body);
      std::lock_guard lock(mutex_);
      return {200, to_json(master_.report(report, now())).dump()};
    }
    if (post && req.target == "/v1/exchange") {
      const ExchangeRequest request = parse_exchange_request(req.body);
      std::lock_guard lock(mutex_);
      const auto all = exchanges_.post(request.key, request.rank, request.size, request.blob, now());
      return {200, to_json(ExchangeReply{all.has_value(), all.value_or(std::vector<std::string>{})}).dump()};
    }
    if (req.method == "GET" && req.target == "/v1/status") {
      std::lock_guard lock(mutex_);
      return {200, master_.status(now()).dump()};
    }
  } catch (const ProtocolError& e) {
    return error(400, e.what());
  } catch (const UnknownAgent& e) {
    return error(404, e.what());
  } catch (const std::invalid_argument& e) {  // an exchange's members disagree
    return error(409, e.what());
  }
  return error(405, "no such request: " + req.method + " " + req.target);
}

MasterService::MasterService(JobMaster& master, std::string token, std::string host, int port) : master_(master), token_(std::move(token)) {
  // Every request shows the job's token in its headers; nothing of its body is read before it is checked.
  http_ = std::make_unique<HttpServer>(
      host, port, HttpLimits{}, [this](const std::string& authorization) { return same_secret(authorization, "Bearer " + token_); },
      [this](const HttpRequest& req) { return route(req); });
  port_ = http_->port();
  // The heartbeat datagrams: the same address and port, over UDP.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port_).c_str(), &hints, &found) == 0 && found) {
    udp_ = ::socket(found->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int queue_bytes = 4 << 20;  // 10 ms of 100,000 agents' datagrams, with room to spare
    if (udp_ >= 0) ::setsockopt(udp_, SOL_SOCKET, SO_RCVBUF, &queue_bytes, sizeof queue_bytes);
    if (udp_ >= 0 && ::bind(udp_, found->ai_addr, found->ai_addrlen) != 0) ::close(udp_), udp_ = -1;
    ::freeaddrinfo(found);
  }
  if (udp_ < 0) std::cerr << "ctwin master: warning: no UDP heartbeats on " << host << ":" << port_ << " (agents report by HTTP only)\n";
  if (udp_ >= 0) datagrams_ = std::thread([this] { serve_datagrams(); });
}

void MasterService::serve_datagrams() {
  char buffer[kLargestDatagram + 1];
  bool busy = false;
  while (!stopping_) {
    sockaddr_storage from{};
    socklen_t from_length = sizeof from;
    // Take what is queued without waiting, then sleep 10 ms: 100 wake-ups a second however many
    // agents there are (a wake-up per datagram cost more than the datagram), for 10 ms of latency.
    const ssize_t n = ::recvfrom(udp_, buffer, sizeof buffer, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n < 0) {  // drained: a short sleep while datagrams stream in, else wait for the next one
      if (busy) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      } else {
        pollfd ready{udp_, POLLIN, 0};
        ::poll(&ready, 1, 100);
      }
      busy = false;
      continue;
    }
    busy = true;
    if (n == 0 || static_cast<std::size_t>(n) > kLargestDatagram) continue;
    const auto heartbeat = decode_heartbeat(std::string(buffer, static_cast<std::size_t>(n)), token_);
    if (!heartbeat) continue;  // not ours, forged, or malformed: dropped unanswered
    std::optional<HeartbeatAnswer> answer;
    {
      std::lock_guard lock(mutex_);
      answer = master_.heartbeat(*heartbeat, JobMaster::Clock::now());
    }
    if (!answer) continue;
    const std::string reply = encode(*answer, token_);
    ::sendto(udp_, reply.data(), reply.size(), 0, reinterpret_cast<const sockaddr*>(&from), from_length);
  }
}

MasterService::~MasterService() {
  stopping_ = true;
  if (datagrams_.joinable()) datagrams_.join();
  if (udp_ >= 0) ::close(udp_);
  const auto c = http_->counts();  // what a flood or a storm cost, for the operator's log
  std::cerr << "ctwin master: http: " << c.served << " answered, " << c.unauthorized << " without the token, " << c.timed_out
            << " cut at a deadline, " << c.dropped << " dropped at the connection cap, accepting paused " << c.paused << " times\n";
  http_.reset();
}

void MasterService::run(const std::atomic<bool>& stop, LiveMetrics* metrics) {
  std::optional<JobMaster::Clock::time_point> done_at;
  double linger_s = 0;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      const auto now = JobMaster::Clock::now();
      master_.tick(now);
      if (metrics) metrics->publish(master_.metrics(now));
      if (master_.done() && !done_at) done_at = now;
      linger_s = 3 * master_.report_interval_s() + 1;
      if (stop) {
        if (!master_.done()) master_.close(now);  // the journal stays: a master started again resumes
        return;
      }
    }
    // The agents hear that the job is over at their next report; then the service ends.
    if (done_at && JobMaster::Clock::now() - *done_at > std::chrono::duration<double>(linger_s)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace ctwin::live::cluster
