#include "sim/monte_carlo.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "core/rng.hpp"
#include "models/storage_path.hpp"
#include "sim/fabric_physics.hpp"
#include "sim/native_driver.hpp"
#include "sim/transfer_physics.hpp"

namespace ctwin {

CheckpointCosts resolve_checkpoint_costs(const Scenario& scenario) {
  const auto& ck = scenario.checkpoint;
  if (ck.save_us && ck.restore_us) return {*ck.save_us, *ck.restore_us, "scenario"};
  // The healthy, full-width job alone on the path: what the interval policy and the report start from.
  const StoragePath path = StoragePath::from(scenario);
  const int movers = std::max(1, scenario.job.nodes);
  CheckpointCosts costs;
  costs.save_us = ck.save_us.value_or(analytic_transfer(path, {Transfer::Save, movers, 0, false}).us);
  costs.restore_us = ck.restore_us.value_or(analytic_transfer(path, {Transfer::Restore, movers, 0, false}).us);
  costs.source = "storage model";
  return costs;
}

std::shared_ptr<const Physics> make_physics(const Scenario& scenario, EngineKind engine) {
  if (!scenario.checkpoint.size_per_gpu_bytes) return nullptr;
  StoragePath path = StoragePath::from(scenario);
  if (engine == EngineKind::Native) return std::make_shared<const AnalyticPhysics>(std::move(path));
  return std::make_shared<const FabricPhysics>(std::move(path));
}

namespace {

void run_driver(const TrialConfig& config, const FaultTimelineModel& faults, const RunOptions& options, RunResult& out) {
  if (options.keep_trials) out.trials.reserve(static_cast<std::size_t>(options.trials));
  EventRecorder recorder;
  std::atomic<int> next{0};
  // Trials finish out of order; each is taken in trial order (the tally's sums, the CSV's rows),
  // the few that finished early waiting for the ones before them.
  std::mutex order_mutex;
  std::map<int, TrialResult> waiting;
  int next_in_order = 0;
  auto finished = [&](int i, TrialResult&& t) {
    std::lock_guard lock(order_mutex);
    waiting.emplace(i, std::move(t));
    for (auto it = waiting.begin(); it != waiting.end() && it->first == next_in_order; it = waiting.erase(it), ++next_in_order) {
      const TrialResult& result = it->second;
      const int index = options.first_trial + it->first;
      out.tally.add(result);
      if (options.on_trial) options.on_trial(index, result);
      if (index == options.recorded_trial) out.recorded = result;
      if (options.keep_trials) out.trials.push_back(std::move(it->second));
    }
  };
  // A trial that throws (a broken invariant) stops the hand-out; the first error reaches the caller.
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto worker = [&] {
    try {
      for (int i = next++; i < options.trials; i = next++) {
        const int index = options.first_trial + i;
        TrialObserver* observer = (index == options.recorded_trial && options.record_events) ? &recorder : nullptr;
        const std::uint64_t seed = trial_seed(options.seed, static_cast<std::uint64_t>(index));
        // Two levels: the trial's rates from their uncertainty, then its faults from those rates.
        finished(i, out.rates_drawn ? run_trial_native(config, faults.with_rates_drawn(seed), seed, observer)
                                    : run_trial_native(config, faults, seed, observer));
      }
    } catch (...) {
      next = options.trials;
      std::lock_guard lock(failed_mutex);
      if (!failed) failed = std::current_exception();
    }
  };
  const int threads = std::max(1, std::min(options.jobs, options.trials));
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
  out.recorded_events = std::move(recorder.events);
}

}  // namespace

int trial_at_goodput_quantile(const std::vector<double>& goodputs, double q) {
  assert(!goodputs.empty() && q >= 0 && q <= 1);
  std::vector<int> order(goodputs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return goodputs[a] < goodputs[b]; });
  return order[static_cast<std::size_t>(std::lround(q * static_cast<double>(goodputs.size() - 1)))];
}

TrialConfig make_run_config(const Scenario& scenario, const RunOptions& options, const CheckpointCosts& costs) {
  TrialConfig config = make_trial_config(scenario, costs);
  if (auto physics = make_physics(scenario, options.engine)) {
    config.physics = std::move(physics);
    config.physics_saves = !scenario.checkpoint.save_us;
    config.physics_restores = !scenario.checkpoint.restore_us;
    config.physics_replicas = config.peer_replicas && !scenario.checkpoint.replication_us;
    config.physics_peer_restores = config.peer_replicas && !scenario.checkpoint.peer_restore_us;
    config.contention = options.contention;
    if (options.engine == EngineKind::Simgrid) {
      // Ask every question a healthy trial asks before the threads start, so the first
      // simulations are not raced for; the rest are asked when a trial's state first needs them.
      Trial warm(config, options.seed);
    }
  }
  return config;
}

RunResult run_trials(const Scenario& scenario, const RunOptions& options) {
  RunResult out;
  out.costs = resolve_checkpoint_costs(scenario);
  out.config = make_run_config(scenario, options, out.costs);
  const FaultTimelineModel faults = FaultTimelineModel::from(scenario);
  out.rates_drawn = options.rate_uncertainty && faults.rates_uncertain();
  std::vector<Comparison::Metric> compared;
  for (const auto& c : scenario.compare) compared.push_back(c.metric);
  out.tally = RunTally(scenario.faults.size(), std::move(compared), options.keep_goodputs);
  run_driver(out.config, faults, options, out);
  return out;
}

}  // namespace ctwin
