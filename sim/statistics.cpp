#include "sim/statistics.hpp"

#include "policies/robust_statistics.hpp"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/students_t.hpp>

namespace ctwin {
namespace {

double percentile(const std::vector<double>& sorted, double q) { return sorted.empty() ? 0 : quantile_of_sorted(sorted, q); }

}  // namespace

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  double sum = 0;
  for (double x : samples) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  double squares = 0;
  for (double x : samples) squares += (x - s.mean) * (x - s.mean);
  s.stddev = s.n > 1 ? std::sqrt(squares / static_cast<double>(s.n - 1)) : 0;
  double half = 0;
  if (s.n > 1) {
    boost::math::students_t t(static_cast<double>(s.n - 1));
    half = boost::math::quantile(t, 0.975) * s.stddev / std::sqrt(static_cast<double>(s.n));
  }
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  std::sort(samples.begin(), samples.end());
  s.p5 = percentile(samples, 0.05);
  s.p50 = percentile(samples, 0.50);
  s.p95 = percentile(samples, 0.95);
  return s;
}

}  // namespace ctwin
