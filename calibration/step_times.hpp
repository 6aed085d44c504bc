#pragma once
//! Step times from trainer logs: their distribution, the share of slow steps and which nodes run
//! slow. A node is slow when its median step time is a robust outlier among its peers' medians
//! (the same robust z, by group, the straggler policy uses, policies/robust_statistics.hpp): the
//! nodes of its pipeline stage and role when the log says which, else every node.

#include <string>
#include <vector>

#include "calibration/estimators.hpp"
#include "calibration/readers/step_log.hpp"

namespace ctwin::calib {

struct SlowNode {
  std::string node;
  double median_s = 0;
  double speed_factor = 1;  //!< the nodes' median over this node's: the speed it runs at
  double robust_z = 0;
  std::size_t steps = 0;
};

struct StepTimeFit {
  std::size_t records = 0, nodes = 0;  //!< nodes: 0 for job-wide logs
  double node_hours = 0;               //!< the per-node records' step times summed: the nodes' observed time
  double median_s = 0, mean_s = 0, p5_s = 0, p95_s = 0, p99_s = 0;
  double slow_step_factor = 1.1;  //!< a step is slow above this times the median
  Interval slow_step_share;       //!< exact (Clopper-Pearson) binomial interval
  std::vector<SlowNode> slow_nodes;
  Interval slow_node_share;       //!< slow nodes / nodes, exact binomial interval
  std::size_t peer_groups = 0;    //!< stage-and-role groups compared apart; 0: the log names none
};

//! Needs at least one record; the per-node figures need at least three nodes.
StepTimeFit fit_step_times(const std::vector<StepRecord>& records, double confidence = 0.95, double z_threshold = 3.5);

//! Exact binomial interval of a proportion (Clopper-Pearson), from Boost.Math's beta quantiles.
Interval binomial_share(std::size_t successes, std::size_t trials, double confidence = 0.95);

}  // namespace ctwin::calib
