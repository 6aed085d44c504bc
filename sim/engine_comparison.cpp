#include "sim/engine_comparison.hpp"

#include <cmath>
#include <stdexcept>

namespace ctwin {

namespace {

double goodput_of(const TrialResult& t) {
  return t.wall_us > 0 ? static_cast<double>(t.ledger[Category::Productive]) / static_cast<double>(t.wall_us) : 0.0;
}

}  // namespace

EngineComparison compare_engines(const RunResult& native, const RunResult& simgrid) {
  if (native.trials.size() != simgrid.trials.size()) throw std::logic_error("compare_engines: different trials");
  EngineComparison c;
  c.trials = static_cast<int>(native.trials.size());
  std::vector<double> differences;
  for (std::size_t i = 0; i < native.trials.size(); ++i) {
    const TrialResult& a = native.trials[i];
    const TrialResult& b = simgrid.trials[i];
    if (a.seed != b.seed) throw std::logic_error("compare_engines: trials with different seeds");
    c.goodput_native += goodput_of(a);
    c.goodput_simgrid += goodput_of(b);
    differences.push_back(goodput_of(b) - goodput_of(a));
    const double wall = static_cast<double>(std::max<Micros>(1, std::max(a.wall_us, b.wall_us)));
    for (std::size_t k = 0; k < kCategoryCount; ++k) {
      const double d = static_cast<double>(b.ledger.us[k] - a.ledger.us[k]);
      c.mean_hours[k] += micros_to_hours(b.ledger.us[k] - a.ledger.us[k]);
      c.largest_share[k] = std::max(c.largest_share[k], std::abs(d) / wall);
    }
    c.largest_wall_share = std::max(c.largest_wall_share, std::abs(static_cast<double>(b.wall_us - a.wall_us)) / wall);
  }
  if (c.trials > 0) {
    c.goodput_native /= c.trials;
    c.goodput_simgrid /= c.trials;
    for (double& h : c.mean_hours) h /= c.trials;
  }
  c.goodput_difference = summarize(differences);
  return c;
}

}  // namespace ctwin
