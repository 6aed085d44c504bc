#include "calibration/shape_choice.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace ctwin::calib {

namespace {

std::string format(const char* pattern, double a, double b = 0, double c = 0) {
  char text[400];
  std::snprintf(text, sizeof text, pattern, a, b, c);
  return text;
}

double span(const Interval& i) { return i.lower > 0 ? i.upper / i.lower : std::numeric_limits<double>::infinity(); }

}  // namespace

std::vector<ShapeChoice> choose_shapes(const std::vector<std::optional<WeibullFit>>& fits, const std::vector<bool>& from_birth,
                                       double confidence) {
  std::vector<ShapeChoice> choices(fits.size());
  std::vector<std::size_t> family;
  for (std::size_t i = 0; i < fits.size(); ++i) {
    ShapeChoice& c = choices[i];
    if (!fits[i]) {
      c.reason = "fewer than 2 failures: exponential";
      continue;
    }
    const WeibullFit& w = *fits[i];
    c.aic_gain = w.likelihood_ratio - 2;
    c.tested = w.failures >= kMinFailuresForShape;
    const bool shape_pinned = !w.shape_at_bound && span(w.shape) < kIdentifiableSpan;
    c.identifiable = shape_pinned && (!from_birth[i] || span(w.mean_life) < kIdentifiableSpan);
    if (!c.tested)
      c.reason = format("%.0f failures, fewer than %.0f: too few to trust a shape; exponential", w.failures, kMinFailuresForShape);
    else if (w.shape_at_bound)
      c.reason = format("not identifiable: the shape's fit stopped at its bound (%.3g); exponential", w.shape.estimate);
    else if (!shape_pinned)
      c.reason = format("not identifiable: the shape's interval %.3g to %.3g spans a factor of %.0f or more; exponential", w.shape.lower,
                        w.shape.upper, kIdentifiableSpan);
    if (c.tested) family.push_back(i);
  }
  // Holm: the j-th smallest p-value (from 0) of m is rejected at alpha / (m - j), until one is not.
  std::sort(family.begin(), family.end(), [&](std::size_t a, std::size_t b) { return fits[a]->shape_one_p_value < fits[b]->shape_one_p_value; });
  const double alpha = 1 - confidence;
  bool stopped = false;
  for (std::size_t j = 0; j < family.size(); ++j) {
    ShapeChoice& c = choices[family[j]];
    const WeibullFit& w = *fits[family[j]];
    c.holm_level = alpha / static_cast<double>(family.size() - j);
    stopped = stopped || w.shape_one_p_value >= c.holm_level;
    if (!c.reason.empty()) continue;  // its shape is not pinned down: said above
    if (stopped)
      c.reason = format("shape 1 not rejected: p %.3g against Holm's level %.3g over %.0f classes; exponential", w.shape_one_p_value, c.holm_level,
                        static_cast<double>(family.size()));
    else if (c.aic_gain <= 0)
      c.reason = format("AIC does not favour the Weibull (likelihood ratio %.3g, 2 or less); exponential", w.likelihood_ratio);
    else if (!c.identifiable)
      c.reason = format("shape 1 rejected (p %.3g), but the mean life is not identifiable: its interval %.3g to %.3g hours spans a factor of 10 or "
                        "more (a window short against the lives); exponential at the observed rate",
                        w.shape_one_p_value, w.mean_life.lower, w.mean_life.upper);
    else {
      c.weibull = true;
      c.reason = format("Weibull: shape 1 rejected (p %.3g, Holm's level %.3g), AIC favours it by %.3g", w.shape_one_p_value, c.holm_level, c.aic_gain);
    }
  }
  return choices;
}

}  // namespace ctwin::calib
