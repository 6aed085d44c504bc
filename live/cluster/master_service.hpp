#pragma once
//! The job master on the network: an HTTP server on an explicit address (http_server.hpp: Boost.Beast,
//! asynchronous, deadlines per request and caps per peer), every request checked against the job's token, and a UDP socket on the same address and port for the agents'
//! steady-state heartbeats (heartbeat_datagram.hpp, each MAC'd with the token); the JobMaster is
//! fed under one lock (live/job/job_master.hpp), in the messages of live/cluster/protocol.hpp.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "live/cluster/exchange_board.hpp"
#include "live/job/http_server.hpp"
#include "live/cluster/protocol.hpp"
#include "live/job/job_master.hpp"

namespace ctwin::live::cluster {

//! Serves `master` on `host`:`port` (0: any free port, reported by `port()`) until the job is done
//! and its agents heard so (or `stop` is set); ticks the master meanwhile.
class MasterService {
 public:
  MasterService(JobMaster& master, std::string token, std::string host, int port);
  ~MasterService();
  MasterService(const MasterService&) = delete;
  MasterService& operator=(const MasterService&) = delete;
  int port() const { return port_; }
  //! `metrics`: published from the master's state a few times a second (null: none).
  void run(const std::atomic<bool>& stop, LiveMetrics* metrics = nullptr);

 private:
  HttpAnswer route(const HttpRequest& request);
  void serve_datagrams();
  JobMaster& master_;
  std::string token_;
  std::mutex mutex_;
  ExchangeBoard exchanges_;  //!< precheck groups' ids (POST /v1/exchange)
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
  int udp_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread datagrams_;
};

//! Compares in time that does not depend on where the strings differ.
bool same_secret(const std::string& a, const std::string& b);

}  // namespace ctwin::live::cluster
