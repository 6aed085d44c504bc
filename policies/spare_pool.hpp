#pragma once
//! The operator's answer to a spare pool running low (`policies.spare_pool`), decided whenever the
//! pool changes: order a top-up when fewer than `below` spares are left (none already on its way,
//! and no more than `at_most` nodes over the run), and while the pool is dry, expedite every repair
//! (each node in the shop back within `expedited_repair` of now). Stateless: what was ordered so far
//! arrives in the view.

#include <vector>

#include "models/scenario.hpp"
#include "policies/controller.hpp"

namespace ctwin {

//! Appends a TopUp and/or an ExpediteRepairs action for the pool as `view` shows it.
void spare_pool_actions(const SparePoolSpec& spec, const control::ClusterView& view, std::vector<control::Action>& actions);

}  // namespace ctwin
