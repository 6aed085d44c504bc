#pragma once
//! Whether a class's lifetimes leave the exponential. A fleet trace fits a dozen classes at once,
//! and at the 5 % level one of them rejects shape 1 by chance about every other calibration; a
//! Weibull mean life from a window far shorter than the lives is an extrapolation, and the rate
//! taken from it was found 3.5x to 6,475x off on the twin's own (exponential) logs. So a class
//! leaves the exponential only when all of these hold, and the report says which did not:
//!   - at least kMinFailuresForShape failures (the classes with as many form the tested family);
//!   - the fit is identifiable: its shape is not at the search's bound, its shape interval spans
//!     less than a factor of 10, and (lives from birth, where the rate comes from the mean life)
//!     so does its mean life's;
//!   - shape 1 is rejected by Holm's step-down over the tested family at level 1 - confidence;
//!   - AIC favours the Weibull (its likelihood ratio above 2, the price of its extra parameter).

#include <optional>
#include <string>
#include <vector>

#include "calibration/estimators.hpp"

namespace ctwin::calib {

//! A Weibull shape is written to the scenario only when shape 1 is rejected on this many failures.
inline constexpr int kMinFailuresForShape = 10;
//! An interval wider than this factor spans an order of magnitude: the quantity is not identifiable.
inline constexpr double kIdentifiableSpan = 10;

struct ShapeChoice {
  bool weibull = false;       //!< the class is written with its Weibull shape
  bool tested = false;        //!< among Holm's family (enough failures)
  bool identifiable = false;  //!< the shape (and, from birth, the mean life) is pinned down by the data
  double holm_level = 0;      //!< the level its p-value had to beat (tested classes)
  double aic_gain = 0;        //!< AIC(exponential) - AIC(Weibull): above 0 favours the Weibull
  std::string reason;         //!< why it is, or is not, a Weibull: for the report
};

//! One choice per class; `fits[i]` absent for a class with fewer than two failures. `from_birth[i]`:
//! lives from the parts' birth, so that the scenario's rate would come from the mean life.
std::vector<ShapeChoice> choose_shapes(const std::vector<std::optional<WeibullFit>>& fits, const std::vector<bool>& from_birth,
                                       double confidence);

}  // namespace ctwin::calib
