// The job master's forecast (issue 48, item 3): with --forecast, it learns the job's interruption
// rate from its own interruptions and serves the rest of the run, with its interval, in its status,
// its metrics and, at each interruption, its log; the interval narrows as the job goes on.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/event_log.hpp"
#include "live/job/job_master.hpp"
#include "models/scenario_loader.hpp"
#include "policies/fault_classes.hpp"
#include "policies/recovery_controller.hpp"
#include "one_node_job.hpp"

using namespace ctwin;
using namespace ctwin::live;
using Clock = JobMaster::Clock;

namespace {

//! One node, software crashes believed at 100 an hour within a factor of about 5.
const char* kForecast = R"({"schema_version": 1, "name": "forecast",
  "cluster": {"nodes": 1, "gpus_per_node": 1, "gpu": {"model": "CPU", "peak_bf16": "1TFLOP/s"}},
  "job": {"nodes": 1, "step_time": "20ms", "horizon": "1h"},
  "faults": [{"name": "software_bug", "rate": "100/node-hour", "rate_uncertainty": {"sigma": 1.0}, "effect": "crash",
              "detection": "0s", "recovery": {"action": "restart", "duration": "0s"}}],
  "checkpoint": {"save_time": "10ms", "restore_time": "1ms"}, "restart": {"overhead": "100ms"},
  "spares": {"repair_time": "1min"}, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})";

}  // namespace

TEST_CASE("job master: --forecast learns the rate from the job's interruptions and serves the rest of the run", "[live][cluster]") {
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "policy.json");
  const RecoveryController controller(s);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("ctwin-forecast-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  MasterOptions o;
  o.nnodes = 1;
  o.report_interval_s = 0.2;
  o.total_steps = 3000;
  o.events_path = (dir / "job.csv").string();
  o.forecast = std::make_shared<const Scenario>(parse_scenario(kForecast, "forecast.json"));
  JobMaster m(s, controller, o, Clock::now());
  test::OneNodeJob job{m, Clock::now()};
  REQUIRE(job.start() == PlanKind::Run);
  job.train(2);
  const nlohmann::json first = m.status(job.now)["forecast"];
  REQUIRE(first.is_object());
  CHECK(first["interruptions"] == 0);
  CHECK(first["until"] == "the steps left (--total-steps)");
  // A crash every 4 s (900 an hour, 9 times the belief): the rate learnt moves up and narrows.
  for (int crash = 0; crash < 8; ++crash) {
    REQUIRE(job.crash(s, "software_bug") == PlanKind::Run);
    job.train(4);
  }
  const auto now = job.now;
  const nlohmann::json last = m.status(now)["forecast"];
  CHECK(last["interruptions"] == 8);
  const auto width = [](const nlohmann::json& f) { return f["interruptions_per_day"]["p95"].get<double>() / f["interruptions_per_day"]["p5"].get<double>(); };
  CHECK(width(last) < width(first) / 2);
  CHECK(last["interruptions_per_day"]["p50"].get<double>() > first["interruptions_per_day"]["p95"].get<double>());
  CHECK(last["remaining_wall_s"]["p5"].get<double>() <= last["remaining_wall_s"]["p50"].get<double>());
  CHECK(last["final_goodput"]["p95"].get<double>() <= 1);
  // The metrics carry it, and every interruption's forecast is a row of the job's log.
  const MetricsSnapshot metrics = m.metrics(now);
  REQUIRE(metrics.forecast);
  CHECK(metrics.forecast->remaining_wall_s[1] == last["remaining_wall_s"]["p50"].get<double>());
  m.close(now);
  std::ifstream in(o.events_path);
  const EventLog log = read_event_log(in, o.events_path);
  int rows = 0;
  for (const LoggedEvent& e : log.events) rows += e.kind == EventKind::Health && e.detail.rfind("forecast steps ", 0) == 0;
  CHECK(rows == 9);  // the first start's and one each interruption
  std::filesystem::remove_all(dir);
}
