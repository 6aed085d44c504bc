#include "policies/runtime_health.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "policies/robust_statistics.hpp"

namespace ctwin {

std::optional<StragglerDecision> runtime_straggler(const std::map<int, double>& step_time_s, double remaining_steps,
                                                   double restart_cost_s, double z_threshold, const std::map<int, int>& group_of) {
  if (step_time_s.size() < 3) return std::nullopt;
  std::vector<int> nodes, groups;
  std::vector<double> times;
  for (const auto& [node, t] : step_time_s) {
    nodes.push_back(node);
    times.push_back(t);
    const auto g = group_of.find(node);
    groups.push_back(g == group_of.end() ? 0 : g->second);
  }
  const std::vector<double> z = robust_z_by_group(groups, times);
  const auto worst = static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin());  // the first of equals
  if (z[worst] <= z_threshold) return std::nullopt;
  double next_slowest = -1;  // in the same group
  for (std::size_t i = 0; i < times.size(); ++i)
    if (i != worst && groups[i] == groups[worst]) next_slowest = std::max(next_slowest, times[i]);
  StragglerDecision d;
  d.node = nodes[worst];
  d.robust_z = z[worst];
  d.seconds_saved = (times[worst] - next_slowest) * remaining_steps;
  d.evict = d.seconds_saved > restart_cost_s;
  return d;
}

std::optional<std::int64_t> LossSpikeWatch::observe(std::int64_t step, double loss) {
  if (recent_.size() >= window_ / 2) {  // a baseline to compare with
    const RobustScale scale = robust_scale(std::vector<double>(recent_.begin(), recent_.end()));
    const bool high = !(loss <= scale.median + z_ * 1.4826 * scale.mad) && !(loss <= ratio_ * scale.median);
    if (high) {
      if (high_++ == 0) onset_ = step;
      if (high_ >= confirm_) {
        const std::int64_t onset = onset_;
        restart();
        return onset;
      }
      return std::nullopt;  // high losses stay out of the baseline
    }
  }
  high_ = 0;
  recent_.push_back(loss);
  if (recent_.size() > window_) recent_.pop_front();
  return std::nullopt;
}

}  // namespace ctwin
