#pragma once
//! A process that has set SimGrid's engine up once and forks a child of itself for each question.
//! A child forked straight from the caller sets the engine up every time (about a third of a
//! checkpoint transfer's simulation); a child of the server starts with it ready, on the server's
//! own thread and malloc arena. The answer is the same either way: each question still gets a
//! fresh process, platform and clock (subprocess.hpp).
//!
//! The server is forked from the caller when first needed and serves one question at a time; a
//! caller that finds it busy or gone forks a child of its own, as before.

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <sys/types.h>

namespace ctwin {

class SimulationServer {
 public:
  //! Runs in a child of the server: the answer to `request` (throws on failure).
  using Handler = std::string (*)(const std::string& request);
  //! Forks the server; nullptr where it cannot start. `many_actors` as init_simgrid_engine's.
  static std::unique_ptr<SimulationServer> start(Handler handler, bool many_actors);
  ~SimulationServer();
  SimulationServer(const SimulationServer&) = delete;
  SimulationServer& operator=(const SimulationServer&) = delete;

  //! The handler's answer, from a child of the server; nullopt when the server is busy with
  //! another thread's question or gone. Throws when the child failed, with its exit status.
  std::optional<std::string> ask(const std::string& request);
  pid_t pid() const { return pid_; }

 private:
  SimulationServer(pid_t pid, int socket) : pid_(pid), socket_(socket) {}
  pid_t pid_ = -1;
  int socket_ = -1;
  bool gone_ = false;
  std::mutex mutex_;
};

}  // namespace ctwin
