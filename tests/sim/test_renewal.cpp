// Exact analytic checks of the trial against the renewal model of checkpoint/restart, and the
// position of the simulated optimum interval.
//
// With exponential crashes only (MTBF M), fixed interval tau, blocking save delta and restart R,
// where faults may strike during saves and restarts, the expected goodput is
//     tau / (M e^{R/M} (e^{(tau+delta)/M} - 1))
// (each tau+delta segment must run fault-free; each failure costs a restart that must, too).
#include <catch2/catch.hpp>

#include <cmath>

#include <Eigen/Dense>

#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

double renewal_goodput(double mtbf, double interval, double save, double restart) {
  return interval / (mtbf * std::exp(restart / mtbf) * (std::exp((interval + save) / mtbf) - 1));
}

Summary simulated_goodput(const Scenario& scenario, int trials, std::uint64_t seed) {
  const RunResult r = run_trials(scenario, test::run_options(trials, seed));
  std::vector<double> goodput;
  for (const auto& t : r.trials)
    goodput.push_back(static_cast<double>(t.ledger[Category::Productive]) / static_cast<double>(t.wall_us));
  return summarize(goodput);
}

}  // namespace

TEST_CASE("simulated goodput matches the renewal expectation within its CI", "[renewal]") {
  struct Case {
    double mtbf, interval, save, restart;
  };
  // Seconds. From frequent to rare faults; intervals near and far from the optimum.
  const std::vector<Case> cases{
      {3600, 600, 60, 300},
      {6 * 3600, 3600, 300, 600},
      {24 * 3600, 2 * 3600, 120, 1800},
      {1800, 1200, 30, 60},
  };
  for (const auto& c : cases) {
    const double horizon = 2000 * c.mtbf;  // long enough that the window's edges do not matter
    const Scenario scenario = test::scenario_from(test::renewal_scenario(c.mtbf, c.interval, c.save, c.restart, horizon));
    const Summary g = simulated_goodput(scenario, 200, 17);
    const double expected = renewal_goodput(c.mtbf, c.interval, c.save, c.restart);
    INFO("M=" << c.mtbf << " tau=" << c.interval << " delta=" << c.save << " R=" << c.restart << ": simulated "
              << g.mean << " [" << g.ci95_low << ", " << g.ci95_high << "], renewal " << expected);
    CHECK(g.ci95_low <= expected);
    CHECK(expected <= g.ci95_high);
    CHECK(g.ci95_high - g.ci95_low < 0.01);  // the check has teeth
  }
}

TEST_CASE("a sweep puts the best interval within 10% of Young's sqrt(2 delta M)", "[renewal]") {
  // delta << M. The grid steps by 5% from an arbitrary start, aligned with no formula; the best
  // interval is the peak of a quadratic fit (in log interval) through the simulated goodputs, all
  // on common random numbers (same seed, so the same fault times at every grid point).
  const double mtbf = 8 * 3600, save = 45, restart = 0;
  const double young = std::sqrt(2 * save * mtbf);  // 1,610 s
  std::vector<double> log_interval, goodput;
  for (double interval = 700; interval < 3700; interval *= 1.05) {
    const Scenario scenario = test::scenario_from(test::renewal_scenario(mtbf, interval, save, restart, 1000 * mtbf));
    log_interval.push_back(std::log(interval));
    goodput.push_back(simulated_goodput(scenario, 200, 4242).mean);
  }
  const auto n = static_cast<Eigen::Index>(goodput.size());
  Eigen::MatrixXd design(n, 3);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double x = log_interval[static_cast<std::size_t>(i)];
    design(i, 0) = 1;
    design(i, 1) = x;
    design(i, 2) = x * x;
    y(i) = goodput[static_cast<std::size_t>(i)];
  }
  const Eigen::Vector3d coef = design.colPivHouseholderQr().solve(y);
  REQUIRE(coef(2) < 0);  // a peak, not a trough
  const double best = std::exp(-coef(1) / (2 * coef(2)));
  INFO("best interval " << best << " s, Young " << young << " s, " << n << " grid points");
  CHECK(std::abs(best / young - 1) < 0.10);
}
