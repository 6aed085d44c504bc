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
