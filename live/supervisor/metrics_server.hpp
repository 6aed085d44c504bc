#pragma once
//! A minimal Prometheus endpoint: GET /metrics answers the exposition text the supervisor gives.
//! Served from the supervisor's own loop (non-blocking, one short request per connection), on
//! 127.0.0.1 unless the operator asks for another address: metrics are not for the whole network.

#include <functional>
#include <string>

namespace ctwin::live {

class MetricsServer {
 public:
  //! Listens on `host:port` (port 0: any free port). Throws std::runtime_error when it cannot.
  MetricsServer(const std::string& host, int port);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  int fd() const { return fd_; }  //!< readable when a client waits
  //! Answers the clients waiting now; `body` is called once per /metrics request.
  void serve(const std::function<std::string()>& body);

 private:
  int fd_ = -1, port_ = 0;
};

}  // namespace ctwin::live
