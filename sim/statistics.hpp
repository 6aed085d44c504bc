#pragma once
//! Summary statistics of Monte Carlo samples: mean with a Student-t 95% interval, percentiles.

#include <cstdint>
#include <map>
#include <vector>

namespace ctwin {

struct Summary {
  double mean = 0;
  double stddev = 0;  //!< sample standard deviation (n - 1)
  double ci95_low = 0, ci95_high = 0;
  double p5 = 0, p50 = 0, p95 = 0;
  std::size_t n = 0;
};

//! Percentiles by linear interpolation between order statistics (Hyndman & Fan type 7).
Summary summarize(std::vector<double> samples);

//! The same summary of samples taken one at a time, in memory that stops growing. Up to
//! kExactSamples every sample is kept and the summary is summarize()'s, to the bit. Past that, the
//! mean and deviation come from running sums (Welford) and the percentiles from a sketch of
//! logarithmic buckets (DDSketch's: each value within kRelativeError of itself), so a million trials
//! cost what a hundred thousand do. The same samples in the same order give the same summary.
class OnlineSummary {
 public:
  static constexpr std::size_t kExactSamples = 100'000;
  static constexpr double kRelativeError = 1e-5;

  void add(double x);
  Summary summary() const;
  std::size_t count() const { return n_; }
  //! Whether the percentiles are exact (every sample kept).
  bool exact() const { return n_ <= kExactSamples; }

 private:
  void sketch(double x);  //!< into the running sums and the buckets
  double quantile(double q) const;  //!< type 7, from the buckets
  double bucket_value(std::int64_t key) const;

  std::size_t n_ = 0, sketched_ = 0;
  std::vector<double> samples_;  //!< while exact
  double mean_ = 0, squares_ = 0;  //!< Welford, once past exact
  std::map<std::int64_t, std::uint64_t> negative_, positive_;  //!< |x| by log bucket
  std::uint64_t zeros_ = 0;
};

}  // namespace ctwin
