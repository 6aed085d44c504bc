#pragma once
//! The controller a scenario's `policies` section describes, for the simulator and the live agent:
//!  - Xid -> action: the table overrides what the fault catalogue proposes;
//!  - elastic: on a spare shortage, drop the fewest whole replicas that let the job run (never
//!    below `min_replicas`), else wait; regrow when the time saved over the rest of the run beats
//!    the cost of the planned stop (a whole replica must be back);
//!  - the precheck: DLRover's two-round node check in every diagnosis; faulty nodes (and, if asked,
//!    stragglers by the 2 x median rule) are replaced;
//!  - run-time stragglers: median/MAD over per-node step times, evicted when worth a planned stop;
//!  - the spare pool: a top-up when it runs low, repairs expedited while it is dry (spare_pool.hpp).

#include "models/scenario.hpp"
#include "policies/controller.hpp"

namespace ctwin {

class RecoveryController final : public control::Controller {
 public:
  explicit RecoveryController(const Scenario& scenario);
  void decide(const control::Event& event, const control::ClusterView& view,
              std::vector<control::Action>& actions) const override;
  void precheck(const std::vector<int>& nodes, control::PrecheckRunner& runner,
                std::vector<control::Action>& actions) const override;
  void precheck_actions(const PrecheckVerdict& verdict, std::vector<control::Action>& actions) const override;

 private:
  std::map<int, XidActionSpec> xid_actions_;
  ElasticSpec elastic_;
  PrecheckSpec precheck_;
  StragglerSpec stragglers_;
  SparePoolSpec spare_pool_;
};

}  // namespace ctwin
