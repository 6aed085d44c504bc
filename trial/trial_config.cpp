#include "trial/trial_config.hpp"

#include <algorithm>
#include <cstdio>

#include "models/fault_timeline.hpp"
#include "models/network_domains.hpp"
#include "policies/checkpoint_policy.hpp"
#include "policies/recovery_controller.hpp"
#include "policies/runtime_health.hpp"

namespace ctwin {

TrialConfig make_trial_config(const Scenario& scenario, const CheckpointCosts& costs) {
  TrialConfig c;
  c.job_nodes = scenario.job.nodes;
  c.spare_nodes = scenario.cluster.spare_nodes;
  c.faults = scenario.faults;
  if (scenario.hang_detection) {
    // The watchdog's heartbeat is the training step: the live agent's HangDetector, fed the step.
    HangDetector watchdog(scenario.hang_detection->factor, micros_to_seconds(scenario.hang_detection->minimum_us));
    watchdog.observe_interval(micros_to_seconds(scenario.job.step_us));
    for (FaultClass& f : c.faults)
      if (f.effect == Effect::Hang || f.effect == Effect::Flap) f.detection_us = seconds_to_micros(watchdog.timeout_s());
  }
  c.save_us = costs.save_us;
  c.restore_us = costs.restore_us;
  const Checkpointing& ck = scenario.checkpoint;
  c.mechanism = ck.mechanism;
  c.save_on_failure = ck.save_on_failure;
  if (ck.mechanism == CheckpointMechanism::Flash) {
    // Flash: the job blocks only for the snapshot; the storage save becomes the background persist.
    c.save_us = ck.snapshot_us;
    c.persist_us = costs.save_us;
    c.persist_every = ck.persist_every;
    c.memory_restore_us = ck.memory_restore_us;
    c.peer_replicas = ck.peer_replicas;
    c.replication_us = ck.replication_us.value_or(0);
    c.peer_restore_us = ck.peer_restore_us.value_or(0);
  }
  c.restart_overhead_us = scenario.restart_overhead_us;
  c.restart = scenario.restart;
  c.repair_us = scenario.spares.fixed_us;
  c.shop = scenario.spares;
  std::shared_ptr<const IntervalPolicy> policy = make_checkpoint_policy(scenario.checkpoint_policy, implied_job_mtbf_s(scenario));
  c.interval_us = policy->interval_us({0, 0, c.save_us, c.restart_overhead_us + c.restore_us});
  if (scenario.checkpoint_policy.kind != CheckpointPolicySpec::Kind::Fixed) c.interval_policy = std::move(policy);
  c.work_us = scenario.job.work_us.value_or(kNever);
  c.end_us = scenario.job.horizon_us ? *scenario.job.horizon_us : scenario.max_wall_us;
  c.maintenance = scenario.maintenance;
  // With no remediation policy the controller would only echo the catalogue: leave it out, and
  // the trial takes the catalogue's actions without a call per fault.
  if (!scenario.xid_actions.empty() || scenario.elastic.shrink || scenario.precheck.enabled || scenario.stragglers.evict ||
      scenario.spare_pool.any())
    c.controller = std::make_shared<const RecoveryController>(scenario);
  c.replica_nodes = scenario.elastic.shrink || scenario.elastic.quorum ? scenario.elastic.replica_nodes : 0;
  c.quorum = scenario.elastic.quorum;
  c.quorum_reform_us = scenario.elastic.reform_us;
  c.quorum_recover_us = scenario.elastic.recover_us;
  c.speed_by_replicas = scenario.elastic.speed_by_replicas;
  c.step_us = scenario.job.step_us;
  c.straggler_observe_us = scenario.stragglers.evict ? scenario.stragglers.observe_us : 0;
  c.precheck_detect_probability = scenario.precheck.detect_probability;
  c.unsaved_work_at_horizon_counts = scenario.unsaved_work_at_horizon_counts;
  c.faults_during_recovery = scenario.faults_during_recovery;
  for (const auto& f : scenario.faults)
    if (is_network(f.rate.component)) {
      c.network = std::make_shared<const NetworkDomains>(build_network_domains(scenario));
      break;
    }
  return c;
}

std::optional<std::string> trial_cost_warning(const Scenario& scenario, const TrialConfig& c, std::int64_t trials) {
  const Micros span = std::min(c.work_us, c.end_us);
  if (span == kNever || trials <= 0) return std::nullopt;
  const double strikes = FaultTimelineModel::from(scenario).expected_strikes(span);
  if (strikes * static_cast<double>(trials) < kCostlyStrikesPerRun) return std::nullopt;
  char text[400];
  std::snprintf(text, sizeof text,
                "/faults: the rates draw about %.3g faults a trial over its %s (rate x parts x time, %zu classes), %.3g in %lld trials: "
                "at about 10 million a second, about %s of CPU (check the rates' units; fewer trials; --jobs)",
                strikes, format_duration(micros_to_seconds(span)).c_str(), scenario.faults.size(), strikes * static_cast<double>(trials),
                static_cast<long long>(trials), format_duration(strikes * static_cast<double>(trials) / 1e7).c_str());
  return std::string(text);
}

std::vector<std::string> checkpoint_warnings(const TrialConfig& c) {
  std::vector<std::string> out;
  const Micros span = std::min(c.work_us, c.end_us);  // what the run covers, failure-free
  if (!c.interval_policy && c.save_us > 0 && c.interval_us < c.save_us) {  // a fixed interval shorter than a save
    char text[400];
    std::snprintf(text, sizeof text,
                  "/policies/checkpoint/interval: a checkpoint every %s of compute, and each save stalls the job %s: "
                  "saving takes %.0f%% of the time, and goodput can be at most %.2f%% (an interval this short is likely a unit slip)",
                  format_duration(micros_to_seconds(c.interval_us)).c_str(), format_duration(micros_to_seconds(c.save_us)).c_str(),
                  100.0 * static_cast<double>(c.save_us) / static_cast<double>(c.interval_us + c.save_us),
                  100.0 * static_cast<double>(c.interval_us) / static_cast<double>(c.interval_us + c.save_us));
    out.emplace_back(text);
  }
  if (!c.interval_policy && span != kNever && c.interval_us >= span) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "/policies/checkpoint/interval: a checkpoint every %s, but the run is %s long: no checkpoint is ever taken, and "
                  "every interruption goes back to the start",
                  format_duration(micros_to_seconds(c.interval_us)).c_str(), format_duration(micros_to_seconds(span)).c_str());
    out.emplace_back(text);
  }
  if (c.mechanism != CheckpointMechanism::Flash) return out;
  const Micros due_every = c.persist_every * (c.interval_us + c.save_us);  // a snapshot to persist, at full speed
  if (c.persist_us > due_every) {
    char text[400];
    std::snprintf(text, sizeof text,
                  "/checkpoint: a persist takes %s but a snapshot is due for one every %s: the persists run back to back, "
                  "each skips to the newest snapshot, and storage holds a checkpoint up to %s old (persist less often, "
                  "or faster)",
                  format_duration(micros_to_seconds(c.persist_us)).c_str(), format_duration(micros_to_seconds(due_every)).c_str(),
                  format_duration(micros_to_seconds(2 * c.persist_us)).c_str());
    out.emplace_back(text);
  }
  return out;
}

}  // namespace ctwin
