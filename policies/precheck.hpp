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
//! `round0_groups`: when given, a group that failed round 0 (time >= `timeout_s`) is not formed
//! again where a swap avoids it: with many failures in round 0, a healthy node would otherwise meet
//! its dead partner again and fail both rounds.
NodeGroups precheck_round1(const NodeTimes& round0, const NodeGroups& round0_groups = {}, double timeout_s = 3600);

struct PrecheckVerdict {
  NodeTimes time;                       //!< each passing node's better round
  std::vector<int> faulty;              //!< failed both rounds
  std::vector<int> stragglers_median;   //!< time > 2 x median
  std::vector<int> stragglers_sigma;    //!< time > mean + 3 sigma of the normal set
};

PrecheckVerdict precheck_verdict(const NodeTimes& round0, const NodeTimes& round1, double timeout_s = 3600);
//! More than half of the nodes (of two or more) failed: the check itself is suspect, not the nodes.
inline bool precheck_most_failed(const PrecheckVerdict& v) {
  const std::size_t checked = v.time.size() + v.faulty.size();
  return checked >= 2 && 2 * v.faulty.size() > checked;
}

//! The rounds as a conversation: ask for the groups to run now, give back their times. The
//! controller runs it through a blocking runner (the simulator's draws); the live master, which
//! cannot block, one round per message exchange with its agents. After the two rounds, a node
//! called a straggler (2 x the median) is measured again, up to `confirm_rounds` times, beside a
//! healthy node while pairs of other healthy nodes (one alone, when no pair is left) run as
//! references in the same round: it is
//! cleared when its group kept within 2 x the references' median. Judged against nodes measured
//! at the same moment, a busy moment on a shared machine (or a neighbour's burst) cannot evict a
//! healthy node, and a node slow every time is still named.
class PrecheckRounds {
 public:
  PrecheckRounds(const std::vector<int>& nodes, double timeout_s, int confirm_rounds);
  //! The round to run now; empty when done.
  const NodeGroups& groups() const { return groups_; }
  bool done() const { return groups_.empty(); }
  int round() const { return round_; }  //!< 0, 1, then the confirmations
  //! Each group's time (the timeout when it failed), in the order of groups().
  void record(const std::vector<double>& group_s);
  //! Complete once done(); stragglers cleared by a confirmation are left out of it.
  const PrecheckVerdict& verdict() const { return verdict_; }
  double timeout_s() const { return timeout_s_; }

 private:
  void judge();
  double timeout_s_;
  int confirm_left_, round_ = 0;
  std::size_t confirming_ = 0;  //!< this confirmation's first groups hold a suspect each; the rest are references
  NodeGroups groups_;
  NodeTimes round0_, round1_;
  std::vector<int> cleared_;
  PrecheckVerdict verdict_;
};

}  // namespace ctwin
