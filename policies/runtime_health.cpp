#include "policies/runtime_health.hpp"

#include <algorithm>
#include <cmath>

#include "policies/robust_statistics.hpp"
#include <vector>

namespace ctwin {

std::optional<StragglerDecision> runtime_straggler(const std::map<int, double>& step_time_s, double remaining_steps,
                                                   double restart_cost_s, double z_threshold) {
  if (step_time_s.size() < 3) return std::nullopt;
  std::vector<double> times;
  for (const auto& [node, t] : step_time_s) times.push_back(t);
  const RobustScale scale = robust_scale(times);
  int slowest = -1;
  double slowest_time = -1, second_time = -1;
  for (const auto& [node, t] : step_time_s) {
    if (t > slowest_time) {
      second_time = slowest_time;
      slowest_time = t;
      slowest = node;
    } else if (t > second_time) {
      second_time = t;
    }
  }
  const double z = scale.z(slowest_time);
  if (z <= z_threshold) return std::nullopt;
  StragglerDecision d;
  d.node = slowest;
  d.robust_z = z;
  d.seconds_saved = (slowest_time - second_time) * remaining_steps;
  d.evict = d.seconds_saved > restart_cost_s;
  return d;
}

}  // namespace ctwin
