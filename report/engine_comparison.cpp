#include "report/engine_comparison.hpp"

#include <cstdio>
#include <sstream>

#include "report/run_report.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

std::string engine_comparison_text(const EngineComparison& c) {
  std::ostringstream out;
  char line[200];
  out << "\n  native approximation error (SimGrid - native, the same " << c.trials << " trials and faults)\n";
  std::snprintf(line, sizeof line, "    goodput  %.3f %% native, %.3f %% SimGrid: %+.4f points, 95%% CI [%+.4f, %+.4f]\n",
                100 * c.goodput_native, 100 * c.goodput_simgrid, 100 * c.goodput_difference.mean,
                100 * c.goodput_difference.ci95_low, 100 * c.goodput_difference.ci95_high);
  out << line;
  std::snprintf(line, sizeof line, "    %-32s %12s  %22s\n", "ledger", "mean hours", "largest, % of a trial");
  out << line;
  for (std::size_t k = 0; k < kCategoryCount; ++k) {
    std::snprintf(line, sizeof line, "    %-32s %+12.4f  %22.4f\n", kCategoryKeys[k], c.mean_hours[k], 100 * c.largest_share[k]);
    out << line;
  }
  std::snprintf(line, sizeof line, "    %-32s %12s  %22.4f\n", "wall", "", 100 * c.largest_wall_share);
  out << line;
  return out.str();
}

nlohmann::ordered_json engine_comparison_json(const EngineComparison& c) {
  nlohmann::ordered_json j;
  j["reference"] = "simgrid";
  j["trials"] = c.trials;
  j["goodput_native"] = c.goodput_native;
  j["goodput_simgrid"] = c.goodput_simgrid;
  j["goodput_difference"] = summary_json(c.goodput_difference);
  nlohmann::ordered_json mean, largest;
  for (std::size_t k = 0; k < kCategoryCount; ++k) {
    mean[kCategoryKeys[k]] = c.mean_hours[k];
    largest[kCategoryKeys[k]] = c.largest_share[k];
  }
  j["ledger_hours_difference"] = std::move(mean);
  j["largest_share_of_trial_wall"] = std::move(largest);
  j["largest_wall_share"] = c.largest_wall_share;
  return j;
}

}  // namespace ctwin
