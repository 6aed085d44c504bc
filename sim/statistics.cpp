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

namespace {

const double kGamma = (1 + OnlineSummary::kRelativeError) / (1 - OnlineSummary::kRelativeError);
const double kLogGamma = std::log(kGamma);
constexpr double kSmallest = 1e-300;  //!< below this, a value counts as zero

std::int64_t bucket_of(double magnitude) { return static_cast<std::int64_t>(std::ceil(std::log(magnitude) / kLogGamma)); }

}  // namespace

void OnlineSummary::add(double x) {
  ++n_;
  if (n_ <= kExactSamples) {
    samples_.push_back(x);
    return;
  }
  if (!samples_.empty()) {  // past exact: what was kept goes into the sums and buckets, and its memory goes
    for (double kept : samples_) sketch(kept);
    std::vector<double>().swap(samples_);
  }
  sketch(x);
}

void OnlineSummary::sketch(double x) {
  ++sketched_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(sketched_);
  squares_ += delta * (x - mean_);
  if (std::abs(x) < kSmallest) ++zeros_;
  else ++(x > 0 ? positive_ : negative_)[bucket_of(std::abs(x))];
}

double OnlineSummary::bucket_value(std::int64_t key) const { return 2 * std::pow(kGamma, static_cast<double>(key)) / (kGamma + 1); }

double OnlineSummary::quantile(double q) const {
  const double position = q * static_cast<double>(n_ - 1);
  const auto below = static_cast<std::uint64_t>(position);
  // The value of the sample of rank r (0-based): negatives from the most negative, zeros, positives.
  auto at_rank = [&](std::uint64_t r) {
    for (auto it = negative_.rbegin(); it != negative_.rend(); ++it) {
      if (r < it->second) return -bucket_value(it->first);
      r -= it->second;
    }
    if (r < zeros_) return 0.0;
    r -= zeros_;
    for (const auto& [key, count] : positive_) {
      if (r < count) return bucket_value(key);
      r -= count;
    }
    return positive_.empty() ? 0.0 : bucket_value(positive_.rbegin()->first);
  };
  const double low = at_rank(below), high = at_rank(std::min<std::uint64_t>(below + 1, n_ - 1));
  return low + (position - static_cast<double>(below)) * (high - low);
}

Summary OnlineSummary::summary() const {
  if (exact()) return summarize(samples_);
  Summary s;
  s.n = n_;
  s.mean = mean_;
  s.stddev = std::sqrt(squares_ / static_cast<double>(n_ - 1));
  const double half = boost::math::quantile(boost::math::students_t(static_cast<double>(n_ - 1)), 0.975) * s.stddev / std::sqrt(static_cast<double>(n_));
  s.ci95_low = s.mean - half;
  s.ci95_high = s.mean + half;
  s.p5 = quantile(0.05);
  s.p50 = quantile(0.50);
  s.p95 = quantile(0.95);
  return s;
}

}  // namespace ctwin
