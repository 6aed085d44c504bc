#include "live/cluster/master_service.hpp"

#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <iostream>
#include <stdexcept>
#include <thread>

#include "live/cluster/heartbeat_datagram.hpp"

namespace ctwin::live::cluster {

struct MasterService::Http {
  httplib::Server server;
  std::thread thread;
};

bool same_secret(const std::string& a, const std::string& b) {
  unsigned char differ = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i)
    differ |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
  return differ == 0;
}

namespace {

void answer(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace

MasterService::MasterService(JobMaster& master, std::string token, std::string host, int port)
    : master_(master), token_(std::move(token)), http_(new Http) {
  auto& server = http_->server;
  server.set_payload_max_length(kLargestBody);
  server.set_read_timeout(5, 0);
  server.set_write_timeout(5, 0);
  server.set_keep_alive_max_count(100);
  // Without it, Nagle's algorithm meets the client's delayed ACK: 40 ms a request, and the eight
  // workers served 200 agents a second (1,000 agents took 20 s to start).
  server.set_tcp_nodelay(true);
  // Every request shows the job's token; nothing is read before it is checked.
  server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (same_secret(req.get_header_value("Authorization"), "Bearer " + token_)) return httplib::Server::HandlerResponse::Unhandled;
    answer(res, 401, {{"error", "wrong or missing job token (Authorization: Bearer ...)"}});
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Post("/v1/join", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const JoinRequest request = parse_join_request(req.body);
      std::lock_guard lock(mutex_);
      answer(res, 200, to_json(master_.join(request, JobMaster::Clock::now())));
    } catch (const ProtocolError& e) {
      answer(res, 400, {{"error", e.what()}});
    }
  });
  server.Post("/v1/report", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const Report report = parse_report(req.body);
      std::lock_guard lock(mutex_);
      answer(res, 200, to_json(master_.report(report, JobMaster::Clock::now())));
    } catch (const ProtocolError& e) {
      answer(res, 400, {{"error", e.what()}});
    } catch (const UnknownAgent& e) {
      answer(res, 404, {{"error", e.what()}});
    }
  });
  server.Post("/v1/exchange", [this](const httplib::Request& req, httplib::Response& res) {
    try {
      const ExchangeRequest request = parse_exchange_request(req.body);
      std::lock_guard lock(mutex_);
      const auto all = exchanges_.post(request.key, request.rank, request.size, request.blob, JobMaster::Clock::now());
      answer(res, 200, to_json(ExchangeReply{all.has_value(), all.value_or(std::vector<std::string>{})}));
    } catch (const ProtocolError& e) {
      answer(res, 400, {{"error", e.what()}});
    } catch (const std::invalid_argument& e) {
      answer(res, 409, {{"error", e.what()}});
    }
  });
  server.Get("/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    answer(res, 200, master_.status(JobMaster::Clock::now()));
  });
  // Debian's httplib is a shared library built to listen with a backlog of 5: 1,000 agents joining
  // at once overflowed it, and each dropped SYN cost an agent a second of retransmission. listen()
  // again on the bound socket raises the backlog (the kernel caps it at somaxconn).
  socket_t listening = INVALID_SOCKET;
  server.set_socket_options([&listening](socket_t sock) {
    httplib::default_socket_options(sock);
    listening = sock;
  });
  port_ = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  server.set_socket_options(httplib::default_socket_options);
  if (port_ > 0 && listening != INVALID_SOCKET) ::listen(listening, SOMAXCONN);
  if (port_ <= 0) {
    delete http_;
    throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not an address of this host)");
  }
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
  http_->thread = std::thread([this] { http_->server.listen_after_bind(); });
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
  http_->server.stop();
  if (http_->thread.joinable()) http_->thread.join();
  delete http_;
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
