#pragma once
//! Small robust statistics the policies share (medians for straggler rules).

#include <algorithm>
#include <vector>

namespace ctwin {

//! Type 7 quantile (Hyndman & Fan: linear between order statistics) of sorted, non-empty values.
inline double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (position - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

//! Median and MAD of a sample, the MAD floored at 0.1% of the median: identical healthy times
//! must not make noise an outlier. A value's robust z is 0.6745 (x - median) / MAD.
struct RobustScale {
  double median = 0, mad = 0;
  double z(double x) const { return mad > 0 ? 0.6745 * (x - median) / mad : 0; }
};

inline RobustScale robust_scale(const std::vector<double>& values);

//! Each value's robust z among the values of its own group: nodes are compared with their peers
//! (the same pipeline stage, the same role), so that a stage that is long by design is not a set
//! of slow nodes. A value in a group of fewer than `min_group` gets 0. One group: the plain z.
inline std::vector<double> robust_z_by_group(const std::vector<int>& group, const std::vector<double>& values,
                                             std::size_t min_group = 3) {
  std::vector<double> z(values.size(), 0.0);
  std::vector<int> seen;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::find(seen.begin(), seen.end(), group[i]) != seen.end()) continue;
    seen.push_back(group[i]);
    std::vector<double> peers;
    for (std::size_t j = 0; j < values.size(); ++j)
      if (group[j] == group[i]) peers.push_back(values[j]);
    if (peers.size() < min_group) continue;
    const RobustScale scale = robust_scale(peers);
    for (std::size_t j = 0; j < values.size(); ++j)
      if (group[j] == group[i]) z[j] = scale.z(values[j]);
  }
  return z;
}

inline RobustScale robust_scale(const std::vector<double>& values) {
  RobustScale s;
  s.median = median_of(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(v > s.median ? v - s.median : s.median - v);
  s.mad = std::max(median_of(std::move(deviations)), 1e-3 * s.median);
  return s;
}

}  // namespace ctwin
