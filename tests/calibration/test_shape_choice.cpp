// Which classes leave the exponential (calibration/shape_choice.hpp): Holm over the classes tested,
// identifiable fits only, AIC in favour, enough failures.
#include <catch2/catch.hpp>

#include <optional>
#include <vector>

#include "calibration/shape_choice.hpp"

using ctwin::calib::choose_shapes;
using ctwin::calib::WeibullFit;

namespace {

//! A fit of shape k [lo, hi] on `failures` failures with shape 1's p-value `p` (and its likelihood
//! ratio), its mean life 1,000 h within a factor `mean_span` end to end.
WeibullFit fit(double p, double k = 1.5, double lo = 1.2, double hi = 1.9, int failures = 40, double mean_span = 3) {
  WeibullFit w;
  w.shape = {k, lo, hi};
  w.mean_life = {1000, 1000 / std::sqrt(mean_span), 1000 * std::sqrt(mean_span)};
  w.shape_one_p_value = p;
  w.likelihood_ratio = p < 0.05 ? 12 : 1;  // in favour beyond AIC's price when shape 1 is rejected
  w.failures = failures;
  return w;
}

}  // namespace

TEST_CASE("shape choice: one class of twelve at p 0.02 stays exponential, one at p 1e-6 does not (Holm)", "[calibration]") {
  std::vector<std::optional<WeibullFit>> fits(10, fit(0.5));
  fits.push_back(fit(0.02));
  fits.push_back(fit(1e-6));
  const auto choices = choose_shapes(fits, std::vector<bool>(12, true), 0.95);
  CHECK_FALSE(choices[10].weibull);  // below 0.05 on its own, not below Holm's 0.05 / 11
  CHECK(choices[10].holm_level == Approx(0.05 / 11));
  CHECK(choices[10].reason.find("not rejected") != std::string::npos);
  CHECK(choices[11].weibull);
  CHECK(choices[11].holm_level == Approx(0.05 / 12));
  for (int i = 0; i < 10; ++i) CHECK_FALSE(choices[i].weibull);
  // Alone, the same p 0.02 is rejected at 0.05.
  CHECK(choose_shapes({fit(0.02)}, {true}, 0.95)[0].weibull);
}

TEST_CASE("shape choice: a fit at its bound, or with an interval over a factor of 10, is not identifiable", "[calibration]") {
  WeibullFit at_bound = fit(1e-9, 20, 0.02, 17891);
  at_bound.shape_at_bound = true;
  const WeibullFit wide = fit(1e-9, 0.3, 0.02, 4);
  const WeibullFit extrapolated = fit(1e-9, 1.5, 1.2, 1.9, 40, 30);  // the mean life known within 30x only
  const auto choices = choose_shapes({at_bound, wide, extrapolated, extrapolated}, {false, true, true, false}, 0.95);
  CHECK_FALSE(choices[0].weibull);
  CHECK_FALSE(choices[0].identifiable);
  CHECK(choices[0].reason.rfind("not identifiable: the shape's fit stopped at its bound", 0) == 0);
  CHECK_FALSE(choices[1].weibull);
  CHECK(choices[1].reason.rfind("not identifiable: the shape's interval", 0) == 0);
  // From birth the rate would come from the mean life: exponential at the observed rate.
  CHECK_FALSE(choices[2].weibull);
  CHECK(choices[2].reason.find("the mean life is not identifiable") != std::string::npos);
  // From mid-life the rate is count / exposure: the mean life's spread does not matter.
  CHECK(choices[3].weibull);
}

TEST_CASE("shape choice: fewer than 10 failures, or AIC against, keep the exponential", "[calibration]") {
  WeibullFit flat_gain = fit(1e-3);
  flat_gain.likelihood_ratio = 1.5;  // an extra parameter that buys less than AIC's price
  const auto choices = choose_shapes({fit(1e-9, 1.5, 1.2, 1.9, 9), flat_gain, std::nullopt}, {true, true, true}, 0.95);
  CHECK_FALSE(choices[0].tested);
  CHECK(choices[0].reason.rfind("9 failures, fewer than 10", 0) == 0);
  CHECK_FALSE(choices[1].weibull);
  CHECK(choices[1].reason.rfind("AIC does not favour", 0) == 0);
  CHECK(choices[1].aic_gain == Approx(-0.5));
  CHECK(choices[2].reason == "fewer than 2 failures: exponential");
}
