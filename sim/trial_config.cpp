#include "sim/trial_config.hpp"

#include "policies/checkpoint_policy.hpp"

namespace ctwin {

TrialConfig make_trial_config(const Scenario& scenario, const CheckpointCosts& costs) {
  TrialConfig c;
  c.job_nodes = scenario.job.nodes;
  c.spare_nodes = scenario.cluster.spare_nodes;
  c.faults = scenario.faults;
  c.save_us = costs.save_us;
  c.restore_us = costs.restore_us;
  c.restart_overhead_us = scenario.restart_overhead_us;
  c.repair_us = scenario.spares.fixed_us;
  c.shop = scenario.spares;
  c.interval_us = make_checkpoint_policy(scenario.checkpoint_policy)->interval_us();
  c.work_us = scenario.job.work_us.value_or(kNever);
  c.end_us = scenario.job.horizon_us ? *scenario.job.horizon_us : scenario.max_wall_us;
  c.maintenance = scenario.maintenance;
  for (const auto& f : scenario.faults)
    if (is_network(f.rate.component)) {
      c.network = std::make_shared<const NetworkDomains>(build_network_domains(scenario));
      break;
    }
  return c;
}

}  // namespace ctwin
