#include "policies/restart_path.hpp"

#include <algorithm>

namespace ctwin {

const char* to_string(RestartPath path) {
  switch (path) {
    case RestartPath::Relaunch: return "relaunch";
    case RestartPath::InProcess: return "in_process";
    case RestartPath::WarmStandby: return "warm_standby";
  }
  return "relaunch";
}

std::optional<RestartPath> restart_path_named(const std::string& name) {
  for (const RestartPath p : {RestartPath::Relaunch, RestartPath::InProcess, RestartPath::WarmStandby})
    if (name == to_string(p)) return p;
  return std::nullopt;
}

RestartPath slower(RestartPath a, RestartPath b) {
  auto rank = [](RestartPath p) { return p == RestartPath::Relaunch ? 2 : p == RestartPath::WarmStandby ? 1 : 0; };
  return rank(a) >= rank(b) ? a : b;
}

bool in_process_takes(const RestartMechanisms& spec, const FaultClass& fc, Act action, bool host_down) {
  return in_process_takes(spec, fc.name, fc.effect, action, host_down);
}

bool in_process_takes(const RestartMechanisms& spec, const std::string& fault_class, Effect effect, Act action, bool host_down) {
  if (spec.mechanism != RestartMechanism::InProcess || host_down) return false;
  if (action != Act::Restart && action != Act::None) return false;
  if (!spec.in_process_faults.empty())
    return std::find(spec.in_process_faults.begin(), spec.in_process_faults.end(), fault_class) != spec.in_process_faults.end();
  return effect == Effect::Crash || effect == Effect::Hang || effect == Effect::Flap;
}

RestartPath restart_path(const RestartMechanisms& spec, bool in_process_possible) {
  if (spec.mechanism == RestartMechanism::InProcess && in_process_possible && spec.in_process_us >= 0) return RestartPath::InProcess;
  if (spec.mechanism != RestartMechanism::Relaunch && spec.warm_standby_us >= 0) return RestartPath::WarmStandby;
  return RestartPath::Relaunch;
}

Micros restart_overhead_us(const RestartMechanisms& spec, Micros relaunch_us, RestartPath path) {
  switch (path) {
    case RestartPath::InProcess: return spec.in_process_us;
    case RestartPath::WarmStandby: return spec.warm_standby_us;
    case RestartPath::Relaunch: break;
  }
  return relaunch_us;
}

}  // namespace ctwin
