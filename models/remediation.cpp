#include "models/remediation.hpp"

#include <algorithm>

namespace ctwin {

const char* to_string(Act act) {
  switch (act) {
    case Act::None: return "none";
    case Act::Restart: return "restart";
    case Act::ResetGpu: return "reset_gpu";
    case Act::Reboot: return "reboot";
    case Act::Replace: return "replace";
    case Act::CheckpointNow: return "checkpoint_now";
    case Act::Shrink: return "shrink";
    case Act::Grow: return "grow";
    case Act::RunPrecheck: return "precheck";
    case Act::TopUp: return "top_up";
    case Act::ExpediteRepairs: return "expedite_repairs";
  }
  return "?";
}

std::optional<Act> act_named(std::string_view name, std::span<const Act> allowed) {
  const auto it = std::find_if(allowed.begin(), allowed.end(), [name](Act a) { return name == to_string(a); });
  return it == allowed.end() ? std::nullopt : std::optional<Act>(*it);
}

}  // namespace ctwin
