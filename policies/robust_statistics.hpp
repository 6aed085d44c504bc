#pragma once
//! Small robust statistics the policies share (medians for straggler rules).

#include <algorithm>
#include <vector>

namespace ctwin {

inline double median_of(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace ctwin
