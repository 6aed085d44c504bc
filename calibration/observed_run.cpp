#include "calibration/observed_run.hpp"

#include "core/text_records.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ctwin::calib {

long ObservedRun::total_interruptions() const {
  long total = unattributed_interruptions;
  for (const auto& [name, n] : interruptions) total += n;
  return total;
}

ObservedRun observe_run(const EventLog& log) {
  ObservedRun run;
  run.file = log.report.file;
  std::array<double, kCategoryCount> ledger{};
  std::array<bool, kCategoryCount> seen{};
  int first_ledger_line = 0;
  bool running_seen = false;
  for (const LoggedEvent& e : log.events) {
    run.highest_node = std::max(run.highest_node, e.node);
    if (e.kind == EventKind::Ledger) {
      if (!first_ledger_line) first_ledger_line = e.line;
      const std::size_t eq = e.detail.find('=');
      const std::string key = e.detail.substr(0, eq);
      const auto it = std::find_if(kCategoryKeys.begin(), kCategoryKeys.end(), [&](const char* k) { return key == k; });
      if (eq == std::string::npos || it == kCategoryKeys.end())
        throw TraceUnreadable(run.file + ": line " + std::to_string(e.line) + ": a ledger row names no category: \"" + e.detail + "\"");
      const auto c = static_cast<std::size_t>(it - kCategoryKeys.begin());
      if (!finite_number(e.detail.substr(eq + 1), ledger[c]) || ledger[c] < 0)
        throw TraceUnreadable(run.file + ": line " + std::to_string(e.line) + ": the ledger's " + key +
                              " is not a non-negative number");
      seen[c] = true;
      continue;  // a closing summary, not an event: it does not extend the run
    }
    run.wall_s = std::max(run.wall_s, e.time_s);
    if (e.kind == EventKind::Start) run.start = e.detail;
    if (e.kind == EventKind::Running && !run.start.empty() && !running_seen) {
      running_seen = true;
      run.startup_s = e.time_s;
    }
    if (e.kind == EventKind::End) run.has_end = true;
    if (e.kind == EventKind::Interrupted) {
      const std::string name(logged_class(e));
      if (name.empty()) ++run.unattributed_interruptions;
      else ++run.interruptions[name];
    } else if (e.kind == EventKind::Fault) {
      ++run.faults[std::string(logged_class(e))];
    }
  }
  const auto present = static_cast<std::size_t>(std::count(seen.begin(), seen.end(), true));
  if (present == 0) return run;
  if (present != kCategoryCount)
    throw TraceUnreadable(run.file + ": line " + std::to_string(first_ledger_line) + ": the ledger rows give " + std::to_string(present) +
                          " of its " + std::to_string(kCategoryCount) + " categories");
  // Six decimals per row: the rows add up to the wall time within a microsecond each.
  const double sum = std::accumulate(ledger.begin(), ledger.end(), 0.0);
  if (std::abs(sum - run.wall_s) > 1e-6 * kCategoryCount + 1e-9 * run.wall_s)
    throw TraceUnreadable(run.file + ": line " + std::to_string(first_ledger_line) + ": the ledger adds up to " + std::to_string(sum) +
                          " s, not the run's " + std::to_string(run.wall_s) + " s");
  run.ledger_s = ledger;
  return run;
}

ObservedRun without_startup(ObservedRun run) {
  const auto restart = static_cast<std::size_t>(Category::Restart);
  // Only what the ledger charged to restart can leave it (a resumed master's log may start running).
  double startup = std::min(run.startup_s, run.wall_s);
  if (run.ledger_s) startup = std::min(startup, (*run.ledger_s)[restart]);
  if (startup <= 0) return run;
  run.wall_s -= startup;
  if (run.ledger_s) (*run.ledger_s)[restart] -= startup;
  return run;
}

}  // namespace ctwin::calib
