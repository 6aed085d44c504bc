#include "test_helpers.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "models/scenario_loader.hpp"

namespace ctwin::test {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

Scenario scenario_from(const nlohmann::json& doc, const std::string& name) { return parse_scenario(doc.dump(), name); }

nlohmann::json renewal_scenario(double mtbf_s, double interval_s, double save_s, double restart_s, double horizon_s) {
  auto seconds = [](double s) {
    std::ostringstream out;
    out.precision(17);
    out << s << "s";
    return out.str();
  };
  std::ostringstream rate;
  rate.precision(17);
  rate << 3600.0 / mtbf_s << "/node-hour";
  return {
      {"schema_version", 1},
      {"name", "renewal"},
      {"cluster", {{"nodes", 1}, {"gpus_per_node", 1}, {"gpu", {{"model", "any"}, {"peak_bf16", "1TFLOP/s"}}}}},
      {"job", {{"nodes", 1}, {"step_time", "1s"}, {"horizon", seconds(horizon_s)}}},
      {"faults",
       {{{"name", "crash"}, {"rate", rate.str()}, {"effect", "crash"}, {"detection", "0s"},
         {"recovery", {{"action", "restart"}, {"duration", "0s"}}}}}},
      {"checkpoint", {{"save_time", seconds(save_s)}, {"restore_time", "0s"}}},
      {"restart", {{"overhead", seconds(restart_s)}}},
      {"policies", {{"checkpoint", {{"type", "fixed"}, {"interval", seconds(interval_s)}}}}},
  };
}

bool Scripted::has(EventKind kind) const { return count(kind) > 0; }

int Scripted::count(EventKind kind) const {
  return static_cast<int>(std::count_if(events.begin(), events.end(), [kind](const RunEvent& e) { return e.kind == kind; }));
}

Scripted run_scripted(const TrialConfig& config, const std::vector<FaultStrike>& strikes, std::uint64_t seed) {
  EventRecorder log;
  Trial trial(config, seed, &log);
  std::size_t next = 0;
  while (!trial.done()) {
    const Micros timer = trial.next_timer();
    const Micros fault = next < strikes.size() ? strikes[next].time : kNever;
    if (fault < timer) trial.on_fault(strikes[next++]);
    else trial.on_timer(timer);
  }
  Scripted out{trial.result(), std::move(log.events), {}};
  for (int slot = 0; slot < config.job_nodes; ++slot) out.slots.push_back(trial.node_in_slot(slot));
  return out;
}

RunOptions run_options(int trials, std::uint64_t seed, int jobs, EngineKind engine) {
  RunOptions options;
  options.trials = trials;
  options.seed = seed;
  options.jobs = jobs;
  options.engine = engine;
  return options;
}

void require_same_trials(const RunResult& a, const RunResult& b) {
  REQUIRE(a.trials.size() == b.trials.size());
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    INFO("trial " << i);
    REQUIRE(a.trials[i].seed == b.trials[i].seed);
    REQUIRE(a.trials[i].ledger == b.trials[i].ledger);
    REQUIRE(a.trials[i].wall_us == b.trials[i].wall_us);
    REQUIRE(a.trials[i].fault_counts == b.trials[i].fault_counts);
    REQUIRE(a.trials[i].interruptions_by_class == b.trials[i].interruptions_by_class);
    REQUIRE(a.trials[i].checkpoints == b.trials[i].checkpoints);
    REQUIRE(a.trials[i].interruptions == b.trials[i].interruptions);
    REQUIRE(a.trials[i].finished_work == b.trials[i].finished_work);
  }
}

std::pair<int, std::string> run_ctwin(const std::string& args) {
  const std::string command = CTWIN_BINARY + std::string(" ") + args + " 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = pipe ? pclose(pipe) : -1;
  return {WEXITSTATUS(status), out};
}

}  // namespace ctwin::test
