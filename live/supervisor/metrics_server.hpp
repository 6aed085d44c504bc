#pragma once
//! A minimal Prometheus endpoint: GET /metrics answers the newest exposition text published.
//! It runs on its own thread, and each client has one whole-request deadline, so no client (a
//! slow one sending a byte every 150 ms, or one that never reads) can delay supervision. Bound to
//! 127.0.0.1 unless the operator asks for another address: metrics are not for the whole network.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>

namespace ctwin::live {

class MetricsServer {
 public:
  //! Listens on `host:port` (port 0: any free port) and starts serving. Throws std::runtime_error
  //! when it cannot. `request_deadline_s`: all the time one client gets to send and receive.
  MetricsServer(const std::string& host, int port, double request_deadline_s = 1.0);
  ~MetricsServer();  //!< stops serving (at most one deadline later)
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  //! The text the next /metrics request gets. Never waits on a client.
  void publish(std::string text);
  //! Requests answered so far (200 or 404), and clients dropped at their deadline.
  long answered() const { return answered_; }
  long dropped() const { return dropped_; }

 private:
  void serve_loop();
  void serve_one(int client);
  int fd_ = -1, port_ = 0;
  int wake_[2] = {-1, -1};  //!< the destructor writes here to end serve_loop's poll
  double deadline_s_;
  std::mutex mutex_;
  std::string text_;
  std::atomic<bool> stopping_{false};
  std::atomic<long> answered_{0}, dropped_{0};
  std::thread thread_;
};

}  // namespace ctwin::live
