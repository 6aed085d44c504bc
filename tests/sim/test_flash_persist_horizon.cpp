// Flash checkpoints whose persists cannot keep up: the forecast must not depend on the horizon
// (persists skip to the newest snapshot; they do not pile up for ever), and `ctwin check` warns.
#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

nlohmann::json slow_persist(const std::string& horizon) {
  auto doc = test::read_json(test::fixture("minimal.json"));
  doc["job"]["horizon"] = horizon;
  doc["checkpoint"] = {{"mechanism", "flash"}, {"save_time", "700s"}, {"restore_time", "1min"},
                       {"snapshot_time", "10s"}, {"memory_restore_time", "20s"}};
  doc["policies"]["checkpoint"] = {{"type", "fixed"}, {"interval", "600s"}};  // a persist due every 610 s
  return doc;
}

double mean_goodput(const RunResult& r) {
  double sum = 0;
  for (const auto& t : r.trials) sum += static_cast<double>(t.ledger[Category::Productive]) / static_cast<double>(t.wall_us);
  return sum / static_cast<double>(r.trials.size());
}

}  // namespace

TEST_CASE("persists slower than the snapshots: goodput does not fall with the horizon", "[flash][mechanisms]") {
  const Scenario day = test::scenario_from(slow_persist("1d"));
  const Scenario months = test::scenario_from(slow_persist("90d"));
  const double short_run = mean_goodput(run_trials(day, test::run_options(60, 5)));
  const double long_run = mean_goodput(run_trials(months, test::run_options(60, 5)));
  // A queue that survives every snapshot fell from 82% to 38% between 1 and 30 days.
  CHECK(long_run > 0.95);
  CHECK(long_run == Approx(short_run).margin(0.02));
  CHECK_FALSE(checkpoint_warnings(run_trials(day, test::run_options(2, 5)).config).empty());
}
