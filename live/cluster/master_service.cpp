#include "live/cluster/master_service.hpp"

#include <httplib.h>

#include <iostream>
#include <stdexcept>
#include <thread>

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
  server.Get("/v1/status", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(mutex_);
    answer(res, 200, master_.status(JobMaster::Clock::now()));
  });
  port_ = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) {
    delete http_;
    throw std::runtime_error("cannot listen on " + host + ":" + std::to_string(port) + " (in use, or not an address of this host)");
  }
  http_->thread = std::thread([this] { http_->server.listen_after_bind(); });
}

MasterService::~MasterService() {
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
