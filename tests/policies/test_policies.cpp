// The engine-neutral policies on their own: checkpoint intervals, DLRover's node check,
// run-time stragglers and hang timeouts.
#include <catch2/catch.hpp>

#include "policies/checkpoint_policy.hpp"
#include "policies/precheck.hpp"
#include "policies/runtime_health.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

TEST_CASE("Young's and Daly's intervals, and Daly's worked examples", "[policies]") {
  CHECK(young_interval_s(300, 86400) == Approx(7200));
  // Daly (2006): delta = 5 min gives 117 min at M = 24 h, 57 min at 6 h, 9.1 min at 15 min.
  CHECK(daly_interval_s(300, 24 * 3600) / 60 == Approx(117).epsilon(0.005));
  CHECK(daly_interval_s(300, 6 * 3600) / 60 == Approx(57).epsilon(0.01));
  CHECK(daly_interval_s(300, 15 * 60) / 60 == Approx(9.1).epsilon(0.01));
  CHECK(daly_interval_s(3000, 600) == 600);  // delta >= 2M: checkpoint every M
}

TEST_CASE("the adaptive policy's MTBF estimate moves from its prior to what it sees", "[policies]") {
  const AdaptivePolicy policy(3600, 2);  // prior: 1 h, worth two failures
  IntervalContext c{0, 0, 60 * kMicrosPerSecond, 0};
  CHECK(policy.estimated_mtbf_s(c) == Approx(3600));
  c.now_us = 1000 * 3600 * kMicrosPerSecond;  // 1,000 h with 500 failures: the truth is 2 h
  c.failures_seen = 500;
  CHECK(policy.estimated_mtbf_s(c) == Approx(2.0 * 3600).epsilon(0.01));
  CHECK(micros_to_seconds(policy.interval_us(c)) == Approx(daly_interval_s(60, 7200)).epsilon(0.01));
}

TEST_CASE("DLRover's node check: the 6-node example finds node 6 faulty", "[policies][precheck]") {
  // docs/tutorial/check_node_health.md: 6 nodes, allgather fails in group {5, 6}; node 6 is bad.
  const NodeGroups round0 = precheck_round0({1, 2, 3, 4, 5, 6});
  CHECK(round0 == NodeGroups{{1, 2}, {3, 4}, {5, 6}});
  const NodeTimes t0{{1, 20.1}, {2, 20.2}, {3, 20.3}, {4, 20.4}, {5, 3600}, {6, 3600}};
  const NodeGroups round1 = precheck_round1(t0);
  CHECK(round1 == NodeGroups{{1, 6}, {2, 5}, {3, 4}});  // fastest with slowest: each suspect beside a healthy node
  // Round 1: the group holding node 6 fails again; node 5, beside a healthy node, passes.
  const NodeTimes t1{{1, 3600}, {6, 3600}, {2, 20.5}, {5, 20.6}, {3, 20.2}, {4, 20.3}};
  const PrecheckVerdict v = precheck_verdict(t0, t1);
  CHECK(v.faulty == std::vector<int>{6});
  CHECK(v.time.at(1) == Approx(20.1));  // passed round 0
  CHECK(v.time.at(5) == Approx(20.6));  // passed round 1
  CHECK(v.stragglers_median.empty());
  CHECK(v.stragglers_sigma.empty());
}

TEST_CASE("DLRover's node check: with many failures in round 0, a failed pair does not meet again", "[policies][precheck]") {
  // Nodes 1 (dead) and 0 fail together, and 2 and 3 too (3 dead): sorted by time, round 1 would pair
  // 0 with 1 again and 0 would fail both rounds beside the dead node.
  const NodeGroups round0 = precheck_round0({0, 1, 2, 3, 4, 5});
  const NodeTimes t0{{0, 60}, {1, 60}, {2, 60}, {3, 60}, {4, 1.0}, {5, 1.1}};
  CHECK(precheck_round1(t0) == NodeGroups{{4, 3}, {5, 2}, {0, 1}});  // DLRover's rule alone
  const NodeGroups round1 = precheck_round1(t0, round0, 60);
  for (const auto& g : round1) {
    CHECK(g.size() == 2);
    CHECK_FALSE((std::min(g[0], g[1]) == 0 && std::max(g[0], g[1]) == 1));
    CHECK_FALSE((std::min(g[0], g[1]) == 2 && std::max(g[0], g[1]) == 3));
  }
  // Healthy pairs that meet again are left alone (DLRover's example keeps {3, 4}).
  const NodeTimes healthy{{1, 20.1}, {2, 20.2}, {3, 20.3}, {4, 20.4}, {5, 3600}, {6, 3600}};
  CHECK(precheck_round1(healthy, precheck_round0({1, 2, 3, 4, 5, 6})) == NodeGroups{{1, 6}, {2, 5}, {3, 4}});
}

TEST_CASE("DLRover's node check: a slow node is a straggler by both rules", "[policies][precheck]") {
  // The same document's log: node 1 is slow in both rounds; node 0 only beside it in round 0.
  const NodeTimes t0{{2, 20.307}, {3, 20.265}, {0, 206.872}, {1, 151.752}};
  const NodeTimes t1{{2, 20.307}, {3, 20.265}, {0, 23.174}, {1, 135.961}};
  const PrecheckVerdict v = precheck_verdict(t0, t1);
  CHECK(v.faulty.empty());
  CHECK(v.stragglers_median == std::vector<int>{1});
  CHECK(v.stragglers_sigma == std::vector<int>{1});
  CHECK(v.time.at(0) == Approx(23.174));
  CHECK(precheck_round0({1, 2, 3, 4, 5}) == NodeGroups{{1, 2}, {3, 4, 5}});  // the odd one joins the last pair
}

TEST_CASE("a run-time straggler is evicted only when the time it saves beats a restart", "[policies]") {
  std::map<int, double> steps;
  for (int n = 0; n < 64; ++n) steps[n] = 10.0 + 0.01 * (n % 5);
  CHECK_FALSE(runtime_straggler(steps, 1e4, 600));  // healthy spread
  steps[17] = 10.6;                                  // one node 6% slow
  const auto far = runtime_straggler(steps, 1e4, 600);  // 10,000 steps left: 0.56 s x 1e4 = 5,600 s saved
  REQUIRE(far);
  CHECK(far->node == 17);
  CHECK(far->evict);
  const auto near_end = runtime_straggler(steps, 100, 600);  // 56 s saved < a 10-min restart
  REQUIRE(near_end);
  CHECK_FALSE(near_end->evict);
}

TEST_CASE("a run-time straggler is found among its stage, not among every node", "[policies]") {
  // Stage 1's nodes (4..7) take 1.3x by design; node 2 (stage 0) is 1.5x its peers.
  std::map<int, double> times;
  std::map<int, int> stage;
  for (int node = 0; node < 8; ++node) {
    stage[node] = node / 4;
    times[node] = (node >= 4 ? 13.0 : 10.0) + 0.01 * node;
  }
  times[2] = 15.0;
  // Among every node, the long stage widens the spread and hides it.
  CHECK_FALSE(runtime_straggler(times, 1e6, 60));
  const auto staged = runtime_straggler(times, 1e6, 60, 3.5, stage);
  REQUIRE(staged);
  CHECK(staged->node == 2);
  CHECK(staged->seconds_saved == Approx((15.0 - 10.03) * 1e6));  // to its stage's next slowest
  // With no slow node, a long stage alone is nobody's fault.
  times[2] = 10.02;
  CHECK_FALSE(runtime_straggler(times, 1e6, 60, 3.5, stage));
}

TEST_CASE("the hang timeout is five times the longest interval seen", "[policies]") {
  HangDetector hang;
  hang.observe_interval(10);
  hang.observe_interval(30);
  hang.observe_interval(20);
  CHECK(hang.timeout_s() == Approx(150));
  CHECK_FALSE(hang.is_hung(140));
  CHECK(hang.is_hung(151));
  CHECK(HangDetector().timeout_s() == 60);  // nothing seen yet: the floor
}

TEST_CASE("checkpoint cadence: every rank saves the same steps, changes apply ahead, small ones are none", "[policies][checkpoint]") {
  CHECK(steps_per_interval(1.0, 0.02) == 50);
  CHECK(steps_per_interval(0.001, 0.02) == 1);  // at least every step
  CHECK(steps_per_interval(1.0, 0) == 1);
  CheckpointCadence cadence;
  CHECK(cadence.saves_at(30, 10));  // before any change: the trainer's own
  CHECK_FALSE(cadence.saves_at(35, 10));
  const auto first = next_cadence(cadence, 25, 103, 7);
  REQUIRE(first);
  CHECK(first->from == 110);  // ahead of the job's step by the lead
  cadence.add(*first);
  CHECK(cadence.revision == 1);
  CHECK(cadence.saves_at(100, 10));  // before `from`, the old rule
  CHECK_FALSE(cadence.saves_at(105, 10));
  CHECK(cadence.saves_at(110, 10));
  CHECK(cadence.saves_at(135, 10));
  CHECK_FALSE(cadence.saves_at(140, 10));
  CHECK_FALSE(next_cadence(cadence, 27, 120, 7));  // within 10%: noise, no change
  CHECK(next_cadence(cadence, 25, 120, 7, -1.0));    // news (an interruption): announced even unchanged
  const auto second = next_cadence(cadence, 10, 104, 2);
  REQUIRE(second);
  CHECK(second->from == 135);  // after the last change's step, at the current rule's next save (110 + 25)
  for (int i = 0; i < 6; ++i) cadence.add({200 + i, 5});
  CHECK(cadence.changes.size() == CheckpointCadence::kKept);
  CHECK(cadence.revision == 7);
}

TEST_CASE("checkpoint cadence: a change keeps the interval counted from the last save or restore, as the simulator's", "[policies][checkpoint]") {
  CheckpointCadence cadence;
  // The first change, the trainer's own rule before it: an interval after the last save.
  const auto first = next_cadence(cadence, 49, 160, 10, 0.1, 150);
  REQUIRE(first);
  CHECK(first->from == 199);
  cadence.add(*first);
  // After a restore to 1718 (a save of that rule), the same interval re-announced (an interruption
  // is news) starts on the rule's phase: no extra save, no shift.
  const auto late = next_cadence(cadence, 49, 1760, 80, -1.0, 1718);
  REQUIRE(late);
  CHECK(late->from == 1865);  // 1718 + 3 x 49: the first save of the rule past step 1840
  // A shorter interval heard in time starts an interval after the restore.
  const auto shorter = next_cadence(cadence, 40, 1720, 5, 0.1, 1718);
  REQUIRE(shorter);
  CHECK(shorter->from == 1758);
  // A longer one waits for the rule's next save (1767) rather than skip it.
  const auto longer = next_cadence(cadence, 60, 1720, 5, 0.1, 1718);
  REQUIRE(longer);
  CHECK(longer->from == 1767);
  // No step known to count from: the rule's first save past the lead; before any rule, the lead.
  CHECK(next_cadence(cadence, 60, 1720, 5)->from == 1767);
  CHECK(next_cadence(CheckpointCadence{}, 60, 1720, 5)->from == 1725);
}
