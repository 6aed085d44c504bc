#pragma once
//! Summary statistics of Monte Carlo samples: mean with a Student-t 95% interval, percentiles.

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

}  // namespace ctwin
