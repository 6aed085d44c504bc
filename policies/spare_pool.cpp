#include "policies/spare_pool.hpp"

#include <algorithm>

namespace ctwin {

void spare_pool_actions(const SparePoolSpec& spec, const control::ClusterView& view, std::vector<control::Action>& actions) {
  // One order at a time: nodes on their way count as coming, so a pool still short when they were
  // ordered does not order again before they land.
  const int allowed = spec.top_up_at_most - view.spares_added;
  if (spec.top_up_nodes > 0 && view.spares_available < spec.top_up_below && view.spares_arriving == 0 && allowed > 0) {
    control::Action order{Act::TopUp, -1, 0, static_cast<double>(spec.top_up_delay_us) / 1e6};
    order.nodes = std::min(spec.top_up_nodes, allowed);
    actions.push_back(order);
  }
  if (spec.expedited_repair_us && view.spares_available == 0)
    actions.push_back({Act::ExpediteRepairs, -1, 0, static_cast<double>(*spec.expedited_repair_us) / 1e6});
}

}  // namespace ctwin
