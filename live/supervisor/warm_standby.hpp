#pragma once
//! A warm standby (issue 51, item 2; ByteRobust's and TrainMover's standby machines, in a node): the
//! agent keeps one trainer process started ahead, its interpreter up and its libraries imported,
//! waiting for an attempt. A launch hands it the attempt's command line and environment through a
//! file ($CTWIN_STANDBY_FILE, written atomically) instead of starting a process: a relaunched node, or
//! a spare taking a rank, skips its launcher's start and `import torch`. The launcher must know the
//! handshake: build/ctwin_ranks.py does.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "live/supervisor/trainer_process.hpp"

namespace ctwin::live {

class WarmStandby {
 public:
  using Environment = std::vector<std::pair<std::string, std::string>>;
  //! Standbys' hand-over files go into `folder` (the agent's control folder).
  explicit WarmStandby(std::string folder) : folder_(std::move(folder)) {}
  ~WarmStandby();
  WarmStandby(const WarmStandby&) = delete;
  WarmStandby& operator=(const WarmStandby&) = delete;

  //! Starts one with the trainer's command line as given (its placeholders unfilled: it waits for
  //! the real one) and `env`, unless one waits already.
  void start(const std::vector<std::string>& argv, Environment env, bool capture_output, double orphan_grace_s);
  //! The standby, handed `argv` and `env` (it runs them as its attempt); null when none is alive.
  std::unique_ptr<TrainerProcess> hand_over(const std::vector<std::string>& argv, const Environment& env);
  bool waiting() const { return process_ != nullptr; }

 private:
  std::string folder_, file_;
  long started_ = 0;
  std::unique_ptr<TrainerProcess> process_;
};

}  // namespace ctwin::live
