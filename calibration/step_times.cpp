#include "calibration/step_times.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <boost/math/distributions/beta.hpp>

#include "policies/robust_statistics.hpp"

namespace ctwin::calib {

Interval binomial_share(std::size_t successes, std::size_t trials, double confidence) {
  Interval i;
  if (trials == 0) return i;
  const double k = static_cast<double>(successes), n = static_cast<double>(trials), alpha = 1 - confidence;
  i.estimate = k / n;
  i.lower = k == 0 ? 0 : boost::math::quantile(boost::math::beta_distribution<>(k, n - k + 1), alpha / 2);
  i.upper = k == n ? 1 : boost::math::quantile(boost::math::beta_distribution<>(k + 1, n - k), 1 - alpha / 2);
  return i;
}

StepTimeFit fit_step_times(const std::vector<StepRecord>& records, double confidence, double z_threshold) {
  StepTimeFit fit;
  fit.records = records.size();
  if (records.empty()) return fit;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_node;
  std::map<std::string, std::string> peers_of;  //!< node -> its stage and role, as the log names them
  for (const StepRecord& r : records) {
    all.push_back(r.duration_s);
    if (r.node.empty()) continue;
    by_node[r.node].push_back(r.duration_s);
    fit.node_hours += r.duration_s / 3600;
    peers_of.try_emplace(r.node, r.peers);
  }
  std::sort(all.begin(), all.end());
  fit.median_s = quantile_of_sorted(all, 0.5);
  double sum = 0;
  for (double d : all) sum += d;
  fit.mean_s = sum / static_cast<double>(all.size());
  fit.p5_s = quantile_of_sorted(all, 0.05);
  fit.p95_s = quantile_of_sorted(all, 0.95);
  fit.p99_s = quantile_of_sorted(all, 0.99);
  const auto slow_steps = static_cast<std::size_t>(all.end() - std::upper_bound(all.begin(), all.end(), fit.slow_step_factor * fit.median_s));
  fit.slow_step_share = binomial_share(slow_steps, all.size(), confidence);

  fit.nodes = by_node.size();
  if (by_node.size() < 3) return fit;
  std::vector<double> medians;
  std::vector<int> groups;
  std::vector<std::string> labels;
  for (const auto& [node, times] : by_node) {
    medians.push_back(median_of(times));
    const std::string& label = peers_of[node];
    const auto at = std::find(labels.begin(), labels.end(), label);
    groups.push_back(static_cast<int>(at - labels.begin()));
    if (at == labels.end()) labels.push_back(label);
  }
  fit.peer_groups = labels.size() == 1 && labels[0].empty() ? 0 : labels.size();
  const std::vector<double> z = robust_z_by_group(groups, medians);
  std::size_t i = 0;
  for (const auto& [node, times] : by_node) {
    if (z[i] > z_threshold) {
      std::vector<double> peers;  // the speed is against the node's peers' median
      for (std::size_t j = 0; j < medians.size(); ++j)
        if (groups[j] == groups[i]) peers.push_back(medians[j]);
      fit.slow_nodes.push_back({node, medians[i], median_of(peers) / medians[i], z[i], times.size()});
    }
    ++i;
  }
  std::sort(fit.slow_nodes.begin(), fit.slow_nodes.end(), [](const SlowNode& a, const SlowNode& b) { return a.robust_z > b.robust_z; });
  fit.slow_node_share = binomial_share(fit.slow_nodes.size(), by_node.size(), confidence);
  return fit;
}

}  // namespace ctwin::calib
