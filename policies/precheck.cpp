#include "policies/precheck.hpp"

#include <algorithm>
#include <cassert>
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

NodeGroups precheck_round1(const NodeTimes& round0, const NodeGroups& round0_groups, double timeout_s) {
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
  auto met = [&](int a, int b) {  // together in a group that failed round 0
    if (round0.at(a) < timeout_s) return false;
    for (const auto& g : round0_groups)
      if (std::find(g.begin(), g.end(), a) != g.end() && std::find(g.begin(), g.end(), b) != g.end()) return true;
    return false;
  };
  auto repeats = [&](const std::vector<int>& g) {
    for (std::size_t i = 0; i < g.size(); ++i)
      for (std::size_t j = i + 1; j < g.size(); ++j)
        if (met(g[i], g[j])) return true;
    return false;
  };
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (!repeats(groups[i])) continue;
    for (std::size_t j = 0; j < groups.size(); ++j) {  // swap second members with a group where neither then repeats
      if (j == i) continue;
      std::swap(groups[i][1], groups[j][1]);
      if (!repeats(groups[i]) && !repeats(groups[j])) break;
      std::swap(groups[i][1], groups[j][1]);
    }
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

PrecheckRounds::PrecheckRounds(const std::vector<int>& nodes, double timeout_s, int confirm_rounds)
    : timeout_s_(timeout_s), confirm_left_(std::max(confirm_rounds, 0)) {
  if (!nodes.empty()) groups_ = precheck_round0(nodes);
}

void PrecheckRounds::record(const std::vector<double>& group_s) {
  assert(group_s.size() == groups_.size() && !done());
  if (round_ == 0 || round_ == 1) {
    NodeTimes& times = round_ == 0 ? round0_ : round1_;
    for (std::size_t g = 0; g < groups_.size(); ++g)
      for (const int node : groups_[g]) times[node] = group_s[g];
  } else {  // a confirmation: each suspect's group against the references' median
    std::vector<double> references;
    for (std::size_t g = confirming_; g < groups_.size(); ++g)
      if (group_s[g] < timeout_s_) references.push_back(group_s[g]);
    const double reference = references.empty() ? 0 : median_of(references);
    for (std::size_t g = 0; g < confirming_; ++g)
      if (reference > 0 && group_s[g] < timeout_s_ && group_s[g] <= 2 * reference) cleared_.push_back(groups_[g][0]);
  }
  ++round_;
  if (round_ == 1) groups_ = precheck_round1(round0_, groups_, timeout_s_);
  else judge();
}

//! The verdict on what was measured; suspects left and confirmations left: another round, each
//! suspect beside one of the fastest healthy nodes, and up to three pairs of the next ones as references.
void PrecheckRounds::judge() {
  verdict_ = precheck_verdict(round0_, round1_, timeout_s_);
  auto is_cleared = [&](int node) { return std::find(cleared_.begin(), cleared_.end(), node) != cleared_.end(); };
  std::erase_if(verdict_.stragglers_median, is_cleared);
  std::erase_if(verdict_.stragglers_sigma, is_cleared);
  groups_.clear();
  confirming_ = 0;
  const auto& suspects = verdict_.stragglers_median;
  if (confirm_left_ == 0 || suspects.empty()) return;
  std::vector<std::pair<double, int>> healthy;
  for (const auto& [node, t] : verdict_.time)
    if (std::find(suspects.begin(), suspects.end(), node) == suspects.end() && std::find(verdict_.stragglers_sigma.begin(), verdict_.stragglers_sigma.end(), node) == verdict_.stragglers_sigma.end())
      healthy.emplace_back(t, node);
  std::sort(healthy.begin(), healthy.end());
  if (healthy.size() < 2) return;  // a partner and a reference at least
  --confirm_left_;
  confirming_ = std::min(suspects.size(), healthy.size() - 1);
  std::size_t next = 0;
  for (std::size_t i = 0; i < confirming_; ++i) groups_.push_back({suspects[i], healthy[next++].second});
  // References: pairs of the next healthy nodes; one left over alone when no pair is.
  for (int pairs = 0; pairs < 3 && next + 2 <= healthy.size(); ++pairs, next += 2) groups_.push_back({healthy[next].second, healthy[next + 1].second});
  if (groups_.size() == confirming_) groups_.push_back({healthy[next].second});
}

}  // namespace ctwin
