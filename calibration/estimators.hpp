#pragma once
//! Estimators that turn counts, lifetimes and durations from fleet traces into scenario numbers,
//! each with its confidence interval. Boost.Math gives the distributions' quantiles and Eigen the
//! linear algebra; nothing here is a hand-rolled special function.

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ctwin::calib {

struct Interval {
  double estimate = 0, lower = 0, upper = 0;
};

//! Events per unit of exposure, with the exact (Garwood) Poisson interval from chi-squared quantiles.
Interval poisson_rate(double count, double exposure, double confidence = 0.95);

//! A lifetime: failed at `time`, or still running then (right-censored). A life observed from a
//! moment in the part's life rather than from its birth (a fleet log's start, with the part's age
//! unknown) is a forward recurrence time: under a stationary fleet its density is S(t) / mean.
struct Life {
  double time = 0;
  bool failed = true;
  bool from_midlife = false;
};

struct WeibullFit {
  Interval shape, scale;       //!< intervals from the observed information (Wald, on the log scale)
  Interval mean_life;          //!< scale x Gamma(1 + 1/shape), interval by the delta method
  double log_likelihood = 0;
  double exponential_scale = 0;  //!< the MLE with the shape held at 1 (the mean life)
  double shape_one_p_value = 1;  //!< likelihood-ratio test of shape = 1 (a Poisson process)
  double likelihood_ratio = 0;   //!< 2 (log L(Weibull) - log L(exponential)): AIC favours the Weibull when above 2
  bool shape_at_bound = false;   //!< the fit stopped at an end of the shape's search range: not an estimate
  int failures = 0, censored = 0;
};
//! Maximum likelihood with right-censoring, and with the stationary first intervals of lives
//! observed from mid-life (left truncation at an unknown age). Needs at least two failures.
WeibullFit fit_weibull(const std::vector<Life>& lives, double confidence = 0.95);

//! Laplace's test for a trend in a Poisson process seen over windows of exposure (hosts observed
//! over different spans, each counted once): under a constant rate the events' exposure-time
//! fractions u = E(t) / E(end) are uniform, so U = (mean u - 1/2) sqrt(12 n) is standard normal.
//! U > 0: the rate rises (more events late); U < 0: it falls.
struct TrendTest {
  int events = 0;
  double statistic = 0;  //!< U
  double p_value = 1;    //!< two-sided
};
//! `times` and `windows` in one clock; events outside every window are left out. Needs 5 events.
std::optional<TrendTest> laplace_trend(const std::vector<double>& times, const std::vector<std::pair<double, double>>& windows);

//! A power-law intensity in time (Crow-AMSAA, MIL-HDBK-189), per window u(t) = l b t^(b - 1) with t
//! from the first window's start, fitted by maximum likelihood over windows of exposure that start
//! and end at different times (l profiled out, b by golden section over 0.1..10).
struct PowerLawFit {
  double shape = 1;       //!< b
  double age = 0;         //!< from the first window's start to the last one's end, in the clock's units
  double end_factor = 1;  //!< the intensity at the end over the constant rate count / exposure
  int events = 0;
  //! Per part, times in hours: comparable with a Weibull fit of the same parts' lives (both have
  //! two parameters, so AIC compares them by this alone).
  double log_likelihood = 0;
};
//! `times` and `windows` in one clock of seconds, each window holding `parts_per_window` parts;
//! events outside every window are left out. Needs 5 events.
std::optional<PowerLawFit> fit_power_law(const std::vector<double>& times, const std::vector<std::pair<double, double>>& windows,
                                         double parts_per_window = 1);

struct LognormalFit {
  Interval mu, sigma;  //!< of log(duration): Student t for mu, chi-squared for sigma
  double median = 0, mean = 0;
  int n = 0;
};
//! Needs at least two positive durations.
LognormalFit fit_lognormal(const std::vector<double>& durations, double confidence = 0.95);

//! The empirical lifetime CDF (1 - Kaplan-Meier survival, so censored lives count) at failure
//! times, thinned to at most `points` evenly spread in rank. Uncensored lives give the ECDF.
struct CdfPoint {
  double time = 0, cdf = 0;
};
std::vector<CdfPoint> empirical_cdf(std::vector<Life> lives, std::size_t points = 100);

//! A job of `nodes` nodes that ran `hours` and ended in `failures` interruptions (0 or more).
struct JobExposure {
  double nodes = 1, hours = 0;
  int failures = 0;
};
//! failures ~ Poisson(r · N^b · T), fitted by Poisson regression (IRLS). b = 1 is the 1/(N·r) law
//! of job MTTF against size; `per_node_rate` is r with b held at 1, per node-hour.
struct MttfScaling {
  Interval exponent;        //!< b
  Interval per_node_rate;   //!< r with b = 1 (exact Poisson interval)
  double exponent_one_p_value = 1;  //!< Wald test of b = 1
  int jobs = 0, failures = 0;
};
MttfScaling fit_mttf_scaling(const std::vector<JobExposure>& jobs, double confidence = 0.95);

//! Per-node counts against the fleet's rate: nodes whose count is improbably high (one-sided
//! Poisson tail below alpha / nodes, Bonferroni) are lemons.
struct NodeCount {
  std::string node;
  int count = 0;
  double exposure = 0;
};
struct Lemon {
  std::string node;
  int count = 0;
  double expected = 0, p_value = 1;
};
std::vector<Lemon> find_lemons(const std::vector<NodeCount>& nodes, double alpha = 0.01);

}  // namespace ctwin::calib
