#include "policies/precheck.hpp"

#include <algorithm>
#include <cmath>

#include "policies/robust_statistics.hpp"

namespace ctwin {

NodeGroups precheck_round0(const std::vector<int>& nodes) {
  NodeGroups groups;
  for (std::size_t i = 0; i + 1 < nodes.size(); i += 2) groups.push_back({nodes[i], nodes[i + 1]});
  if (nodes.size() % 2 == 1) {
    if (groups.empty()) groups.push_back({nodes.back()});
    else groups.back().push_back(nodes.back());  // the odd one joins the last pair
  }
  return groups;
}

NodeGroups precheck_round1(const NodeTimes& round0) {
  std::vector<std::pair<double, int>> by_time;
  for (const auto& [node, t] : round0) by_time.emplace_back(t, node);
  std::sort(by_time.begin(), by_time.end());  // ties broken by node id: deterministic
  NodeGroups groups;
  std::size_t lo = 0, hi = by_time.size();
  while (hi - lo >= 2) groups.push_back({by_time[lo++].second, by_time[--hi].second});
  if (hi - lo == 1) {
    if (groups.empty()) groups.push_back({by_time[lo].second});
    else groups.back().push_back(by_time[lo].second);
  }
  return groups;
}

PrecheckVerdict precheck_verdict(const NodeTimes& round0, const NodeTimes& round1, double timeout_s) {
  PrecheckVerdict v;
  for (const auto& [node, t0] : round0) {
    const auto it = round1.find(node);
    const double t1 = it == round1.end() ? timeout_s : it->second;
    const bool pass0 = t0 < timeout_s, pass1 = t1 < timeout_s;
    if (!pass0 && !pass1) v.faulty.push_back(node);
    else v.time[node] = std::min(pass0 ? t0 : timeout_s, pass1 ? t1 : timeout_s);
  }
  std::vector<double> times;
  for (const auto& [node, t] : v.time) times.push_back(t);
  const double median = median_of(times);
  std::vector<double> normal;
  for (const auto& [node, t] : v.time) {
    if (t > 2 * median) v.stragglers_median.push_back(node);
    else normal.push_back(t);
  }
  // Mean + 3 sigma over the normal set; sigma is floored at 1% of the mean, so identical healthy
  // times do not make every slightly slower node a straggler.
  double mean = 0, var = 0;
  for (double t : normal) mean += t;
  mean = normal.empty() ? 0 : mean / static_cast<double>(normal.size());
  for (double t : normal) var += (t - mean) * (t - mean);
  const double sigma = std::max(normal.size() > 1 ? std::sqrt(var / static_cast<double>(normal.size() - 1)) : 0.0, 0.01 * mean);
  for (const auto& [node, t] : v.time)
    if (t > mean + 3 * sigma) v.stragglers_sigma.push_back(node);
  return v;
}

}  // namespace ctwin
