#include "sim/monte_carlo.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
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

//! The step factor trial `seed` draws: log-triangular over [low, high] with its mode at 1, from
//! its own stream (the faults' draws do not move when it is on).
double step_factor(const RunOptions::StepDraw& d, std::uint64_t seed) {
  const double u = static_cast<double>(splitmix64(seed ^ 0x5354455044524157ULL) >> 11) * 0x1.0p-53;
  const double a = std::log(std::min(1.0, d.low)), c = 0, b = std::log(std::max(1.0, d.high));
  if (b - a <= 0) return 1;
  const double split = (c - a) / (b - a);
  const double x = u < split ? a + std::sqrt(u * (b - a) * (c - a)) : b - std::sqrt((1 - u) * (b - a) * (b - c));
  return std::exp(x);
}

//! The trial's config with its step drawn (and work counted in steps stretched with it).
TrialConfig with_step_drawn(const TrialConfig& config, const RunOptions::StepDraw& d, std::uint64_t seed) {
  TrialConfig c = config;
  const double f = step_factor(d, seed);
  c.step_us = std::max<Micros>(1, static_cast<Micros>(std::llround(static_cast<double>(config.step_us) * f)));
  if (d.work_in_steps && config.work_us != kNever)
    c.work_us = std::max<Micros>(1, static_cast<Micros>(std::llround(static_cast<double>(config.work_us) * f)));
  return c;
}

//! Trials first_trial .. first_trial + trials - 1 into the tally; or, given `again`, those trials
//! (indices, ascending) run again for options.on_trial alone.
void run_driver(const TrialConfig& config, const FaultTimelineModel& faults, const RunOptions& options, RunResult& out,
                const std::vector<int>& again = {}) {
  const bool rerun = !again.empty();
  const int count = rerun ? static_cast<int>(again.size()) : options.trials;
  auto index_of = [&](int i) { return rerun ? again[static_cast<std::size_t>(i)] : options.first_trial + i; };
  if (options.keep_trials && !rerun) out.trials.reserve(static_cast<std::size_t>(options.trials));
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
      const int index = index_of(it->first);
      if (options.on_trial) options.on_trial(index, result);
      if (rerun) continue;
      out.tally.add(result);
      if (index == options.recorded_trial) out.recorded = result;
      if (options.keep_trials) out.trials.push_back(std::move(it->second));
    }
  };
  // A trial that throws (a broken invariant) stops the hand-out; the first error reaches the caller.
  std::mutex failed_mutex;
  std::exception_ptr failed;
  auto worker = [&] {
    try {
      for (int i = next++; i < count; i = next++) {
        const int index = index_of(i);
        TrialObserver* observer = (!rerun && index == options.recorded_trial && options.record_events) ? &recorder : nullptr;
        const std::uint64_t seed = trial_seed(options.seed, static_cast<std::uint64_t>(index));
        // Two levels: the trial's rates from their uncertainty, then its faults from those rates.
        // A third level when asked: the trial's step time from the step model's range.
        const std::optional<TrialConfig> stepped =
            options.step_draw ? std::optional<TrialConfig>(with_step_drawn(config, *options.step_draw, seed)) : std::nullopt;
        const TrialConfig& trial = stepped ? *stepped : config;
        finished(i, out.rates_drawn ? run_trial_native(trial, faults.with_rates_drawn(seed), seed, observer)
                                    : run_trial_native(trial, faults, seed, observer));
      }
    } catch (...) {
      next = count;
      std::lock_guard lock(failed_mutex);
      if (!failed) failed = std::current_exception();
    }
  };
  const int threads = std::max(1, std::min(options.jobs, count));
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
  if (!rerun) out.recorded_events = std::move(recorder.events);
}

//! The tail's trials: from the tally's lowest and first ones, the others (ties past the lowest, the
//! median run past the first) run again; summed in index order, so the bytes do not depend on which.
RunTail gather_tail(const FaultTimelineModel& faults, const RunOptions& options, RunResult& out) {
  RunTail tail;
  const std::vector<double>& goodputs = out.tally.goodputs();
  tail.p5 = out.tally.goodput().summary().p5;
  tail.run_trials = goodputs.size();
  const TailTrials which = tail_trials(goodputs, tail.p5);
  std::vector<const LowTrial*> lowest;
  for (const LowTrial& t : out.tally.lowest_trials()) lowest.push_back(&t);
  std::sort(lowest.begin(), lowest.end(), [](const LowTrial* a, const LowTrial* b) { return a->index < b->index; });
  auto in_lowest = [&](int i) -> const LowTrial* {
    const auto it = std::lower_bound(lowest.begin(), lowest.end(), i, [](const LowTrial* t, int index) { return t->index < index; });
    return it != lowest.end() && (*it)->index == i ? *it : nullptr;
  };
  const std::vector<TrialResult>& first = out.tally.first_trials();
  std::vector<int> again;
  for (int i : which.indices)
    if (!in_lowest(i) && static_cast<std::size_t>(i) >= first.size()) again.push_back(options.first_trial + i);
  std::map<int, LowTrial> ran;
  if (!again.empty()) {
    RunOptions rerun = options;
    rerun.record_events = false;
    rerun.on_trial = [&](int index, const TrialResult& t) {
      ran.emplace(index - options.first_trial, LowTrial{goodput(t), index - options.first_trial, t.wall_us, t.ledger});
    };
    run_driver(out.config, faults, rerun, out, again);
  }
  for (int i : which.indices) {
    const double g = goodputs[static_cast<std::size_t>(i)];
    if (const LowTrial* t = in_lowest(i)) add_to_tail(tail, which, i, t->ledger, t->wall_us, g);
    else if (static_cast<std::size_t>(i) < first.size()) add_to_tail(tail, which, i, first[static_cast<std::size_t>(i)].ledger, first[static_cast<std::size_t>(i)].wall_us, g);
    else add_to_tail(tail, which, i, ran.at(i).ledger, ran.at(i).wall_us, g);
  }
  return tail;
}

}  // namespace

int trial_at_goodput_quantile(const std::vector<double>& goodputs, double q) {
  assert(!goodputs.empty() && q >= 0 && q <= 1);
  const auto rank = static_cast<std::size_t>(std::lround(q * static_cast<double>(goodputs.size() - 1)));
  // The value at that rank, by bisecting the values' bits (a goodput is not negative, and the bits
  // of non-negative doubles order as they do): no copy and no index array of a million trials.
  auto bits = [](double x) {
    assert(x >= 0 && "a goodput is not negative");
    std::uint64_t b = 0;
    std::memcpy(&b, &x, sizeof b);
    return x == 0 ? std::uint64_t{0} : b;
  };
  auto at_most = [&](std::uint64_t key) {
    return static_cast<std::size_t>(std::count_if(goodputs.begin(), goodputs.end(), [&](double g) { return bits(g) <= key; }));
  };
  std::uint64_t lo = 0, hi = 0;
  for (double g : goodputs) hi = std::max(hi, bits(g));
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (at_most(mid) > rank) hi = mid;
    else lo = mid + 1;
  }
  // Ties go to the lower index: among the trials of that value, the one the rank falls on.
  std::size_t ahead = lo == 0 ? 0 : at_most(lo - 1);
  for (std::size_t i = 0; i < goodputs.size(); ++i)
    if (bits(goodputs[i]) == lo && ahead++ == rank) return static_cast<int>(i);
  return static_cast<int>(goodputs.size() - 1);  // unreachable: the rank's value is there
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
  // The tail keeps the lowest trials' ledgers: every one at or below p5 (type 7) and the p5 run, ties aside.
  const std::size_t lowest = options.tail ? static_cast<std::size_t>(0.05 * std::max(0, options.trials - 1)) + 2 : 0;
  out.tally = RunTally(scenario.faults.size(), std::move(compared), options.keep_goodputs || options.tail, lowest);
  out.tally.reserve(static_cast<std::size_t>(options.trials));
  run_driver(out.config, faults, options, out);
  if (options.tail && out.tally.trials() > 0) out.tail = gather_tail(faults, options, out);
  return out;
}

}  // namespace ctwin
