#include "live/supervisor/warm_standby.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"

namespace ctwin::live {

WarmStandby::~WarmStandby() {
  process_.reset();  // killed with its group
  if (!file_.empty()) ::unlink(file_.c_str());
}

void WarmStandby::start(const std::vector<std::string>& argv, Environment env, bool capture_output, double orphan_grace_s) {
  if (process_ && !process_->poll_exit()) return;
  if (!file_.empty()) ::unlink(file_.c_str());
  file_ = folder_ + "/standby-" + std::to_string(++started_) + ".json";  // a new name each: never an old hand-over
  env.emplace_back("CTWIN_STANDBY_FILE", file_);
  process_ = std::make_unique<TrainerProcess>(argv, env, capture_output, orphan_grace_s);
}

std::unique_ptr<TrainerProcess> WarmStandby::hand_over(const std::vector<std::string>& argv, const Environment& env) {
  if (!process_ || process_->poll_exit()) {
    process_.reset();
    return nullptr;
  }
  nlohmann::json variables = nlohmann::json::object();
  for (const auto& [name, value] : env) variables[name] = value;
  write_file_atomically(file_, nlohmann::json{{"argv", argv}, {"env", variables}}.dump() + "\n");
  file_.clear();  // the standby removes it once read
  return std::move(process_);
}

}  // namespace ctwin::live
