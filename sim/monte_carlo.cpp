#include "sim/monte_carlo.hpp"

#include <atomic>
#include <thread>

#include "core/rng.hpp"
#include "sim/native_driver.hpp"
#include "sim/simgrid/checkpoint_model.hpp"
#include "sim/simgrid/simgrid_driver.hpp"

namespace ctwin {

CheckpointCosts resolve_checkpoint_costs(const Scenario& scenario) {
  const auto& ck = scenario.checkpoint;
  if (ck.save_us && ck.restore_us) return {*ck.save_us, *ck.restore_us, "scenario"};
  CheckpointCosts costs;
  const StorageCosts physical = storage_costs(StorageQuestion::from(scenario));
  costs.save_us = ck.save_us.value_or(seconds_to_micros(physical.save_s));
  costs.restore_us = ck.restore_us.value_or(seconds_to_micros(physical.restore_s));
  costs.source = "simgrid";
  return costs;
}

namespace {

void run_native(const TrialConfig& config, const FaultTimelineModel& faults, const RunOptions& options,
                RunResult& out) {
  out.trials.resize(static_cast<std::size_t>(options.trials));
  EventRecorder recorder;
  std::atomic<int> next{0};
  auto worker = [&] {
    for (int i = next++; i < options.trials; i = next++) {
      const int index = options.first_trial + i;
      TrialObserver* observer = (index == 0 && options.record_trial0) ? &recorder : nullptr;
      out.trials[static_cast<std::size_t>(i)] =
          run_trial_native(config, faults, trial_seed(options.seed, static_cast<std::uint64_t>(index)), observer);
    }
  };
  const int threads = std::max(1, std::min(options.jobs, options.trials));
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  out.trial0_events = std::move(recorder.events);
}

}  // namespace

RunResult run_trials(const Scenario& scenario, const RunOptions& options) {
  RunResult out;
  out.costs = resolve_checkpoint_costs(scenario);
  out.config = make_trial_config(scenario, out.costs);
  const FaultTimelineModel faults = FaultTimelineModel::from(scenario);
  if (options.engine == EngineKind::Native) {
    run_native(out.config, faults, options, out);
  } else {
    SimgridRun run = run_trials_simgrid(scenario, out.config, faults, options.seed, options.first_trial, options.trials,
                                        options.jobs, options.record_trial0);
    out.trials = std::move(run.trials);
    out.trial0_events = std::move(run.trial0_events);
  }
  return out;
}

}  // namespace ctwin
