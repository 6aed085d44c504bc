#pragma once
//! The precheck before a (re)start: DLRover's node check. Round 0 pairs adjacent nodes (an odd one
//! joins the last pair); each group runs a GEMM burn-in and an all-reduce and reports its time
//! (a timeout counts as failed). Round 1 sorts the nodes by round-0 time and pairs the fastest with
//! the slowest, so a suspect runs beside a healthy node. A node passes if either round passed, and
//! its time is its better round; it is faulty if it failed both. Stragglers: time > 2 x median,
//! and (second rule) time > mean + 3 sigma of the normal set. Used by the simulator and, with
//! real timings, by the live controller.

#include <map>
#include <vector>

namespace ctwin {

using NodeGroups = std::vector<std::vector<int>>;
using NodeTimes = std::map<int, double>;  //!< node -> seconds (>= timeout: failed)

NodeGroups precheck_round0(const std::vector<int>& nodes);
NodeGroups precheck_round1(const NodeTimes& round0);

struct PrecheckVerdict {
  NodeTimes time;                       //!< each passing node's better round
  std::vector<int> faulty;              //!< failed both rounds
  std::vector<int> stragglers_median;   //!< time > 2 x median
  std::vector<int> stragglers_sigma;    //!< time > mean + 3 sigma of the normal set
};

PrecheckVerdict precheck_verdict(const NodeTimes& round0, const NodeTimes& round1, double timeout_s = 3600);

}  // namespace ctwin
