// The controller (policies/controller.hpp): its decisions on their own, without a simulator, and
// the trial carrying them out: Xid -> action, shrink and regrow, the precheck in the diagnosis,
// run-time straggler eviction. Both engines must agree on a scenario that uses all of them.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "models/scenario_loader.hpp"
#include "trial/trial.hpp"
#include "policies/recovery_controller.hpp"
#include "sim/experiments.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/scripted.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond, hour = 3600 * s, day = 86400 * s;

control::ClusterView view_of(int active, int total, int replica_nodes, int vacant, int spares) {
  control::ClusterView v;
  v.job_nodes = total * replica_nodes;
  v.replica_nodes = replica_nodes;
  v.active_replicas = active;
  v.total_replicas = total;
  v.vacant_slots = vacant;
  v.spares_available = spares;
  v.step_s = 5;
  v.remaining_s = 30 * 86400;
  v.restart_cost_s = 600;
  return v;
}

std::vector<control::Action> decide(const RecoveryController& c, const control::Event& e, const control::ClusterView& v) {
  std::vector<control::Action> out;
  c.decide(e, v, out);
  return out;
}

control::Event event(control::Signal signal) {
  control::Event e;
  e.signal = signal;
  return e;
}

//! Group times from a table: a group takes its slowest member's time.
class TablePrecheck final : public control::PrecheckRunner {
 public:
  explicit TablePrecheck(std::map<int, double> t) : time_(std::move(t)) {}
  std::vector<double> run_groups(const std::vector<std::vector<int>>& groups) override {
    std::vector<double> out;
    for (const auto& g : groups) {
      double slowest = 0;
      for (int n : g) slowest = std::max(slowest, time_.at(n));
      out.push_back(slowest);
    }
    ++rounds;
    return out;
  }
  double timeout_s() const override { return 3600; }
  int rounds = 0;

 private:
  std::map<int, double> time_;
};

//! One replace-on-failure class and one slow class, on 8 nodes in replicas of 2, no spares.
TrialConfig elastic_config(const Scenario& policies) {
  FaultClass lost;
  lost.name = "gpu_lost";
  lost.xid = 79;
  lost.effect = Effect::Crash;
  lost.action = Act::Replace;
  lost.detection_us = 10 * s;
  lost.action_us = 300 * s;
  FaultClass slow;
  slow.name = "slow_gpu";
  slow.effect = Effect::Slow;
  slow.speed_factor = 0.5;
  slow.detection_us = day;
  slow.action = Act::None;
  slow.action_us = 10 * day;
  TrialConfig c;
  c.job_nodes = 8;
  c.spare_nodes = 0;
  c.faults = {lost, slow};
  c.interval_us = hour;
  c.save_us = 20 * s;
  c.restore_us = 60 * s;
  c.restart_overhead_us = 240 * s;
  c.repair_us = 2 * day;
  c.end_us = 30 * day;
  c.step_us = 5 * s;
  c.controller = std::make_shared<const RecoveryController>(policies);
  c.replica_nodes = policies.elastic.shrink ? policies.elastic.replica_nodes : 0;
  c.straggler_observe_us = policies.stragglers.evict ? policies.stragglers.observe_us : 0;
  c.precheck_detect_probability = policies.precheck.detect_probability;
  return c;
}

Scenario shrink_policies() {
  Scenario p;
  p.elastic.shrink = true;
  p.elastic.replica_nodes = 2;
  p.elastic.min_replicas = 2;
  return p;
}

}  // namespace

TEST_CASE("controller: the Xid table overrides the catalogue's action", "[controller]") {
  Scenario p;
  p.xid_actions[79] = {Act::Replace, 5 * 60 * s};
  const RecoveryController c(p);
  control::Event e = event(control::Signal::Fault);
  e.node = 3;
  e.xid = 79;
  e.proposed = {Act::Reboot, 3, 0, 600};
  auto out = decide(c, e, view_of(4, 4, 2, 0, 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].act == Act::Replace);
  CHECK(out[0].seconds == Approx(300));
  e.xid = 48;  // not in the table: the catalogue's action stands
  out = decide(c, e, view_of(4, 4, 2, 0, 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].act == Act::Reboot);
  CHECK(out[0].seconds == Approx(600));
}

TEST_CASE("controller: shrink by the fewest whole replicas, never below the minimum, regrow when worth it",
          "[controller][elastic]") {
  const RecoveryController c(shrink_policies());
  // 4 replicas of 2 nodes, one slot vacant: 7 nodes fill 3 replicas.
  auto out = decide(c, event(control::Signal::SpareShortage), view_of(4, 4, 2, 1, 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].act == Act::Shrink);
  CHECK(out[0].replicas == 1);
  // Three vacant slots in 4 replicas: 5 nodes fill 2.
  out = decide(c, event(control::Signal::SpareShortage), view_of(4, 4, 2, 3, 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].replicas == 2);
  // At the minimum already: wait.
  CHECK(decide(c, event(control::Signal::SpareShortage), view_of(2, 4, 2, 1, 0)).empty());
  // The wait policy never shrinks.
  CHECK(decide(RecoveryController(Scenario{}), event(control::Signal::SpareShortage), view_of(4, 4, 2, 1, 0)).empty());

  // Two nodes back while running 3 of 4 replicas: a whole replica; 30 days left saves far more than 10 min.
  out = decide(c, event(control::Signal::NodeReturned), view_of(3, 4, 2, 0, 2));
  REQUIRE(out.size() == 1);
  CHECK(out[0].act == Act::Grow);
  CHECK(out[0].replicas == 1);
  CHECK(decide(c, event(control::Signal::NodeReturned), view_of(3, 4, 2, 0, 1)).empty());  // not a whole replica
  auto near_end = view_of(3, 4, 2, 0, 2);
  near_end.remaining_s = 1200;  // growing saves 1200 (1 - 3/4) = 300 s < the 600 s stop
  CHECK(decide(c, event(control::Signal::NodeReturned), near_end).empty());
}

TEST_CASE("controller: a slow node in the step times is evicted when the run has long to go", "[controller]") {
  Scenario p;
  p.stragglers.evict = true;
  p.stragglers.observe_us = 600 * s;
  const RecoveryController c(p);
  std::vector<std::pair<int, double>> steps;
  for (int n = 0; n < 32; ++n) steps.emplace_back(n, 5.0 + 0.01 * (n % 3));
  steps[9].second = 10.0;
  control::Event e = event(control::Signal::StepTimes);
  e.step_times = &steps;
  auto out = decide(c, e, view_of(4, 4, 8, 0, 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].act == Act::Replace);
  CHECK(out[0].node == 9);
  auto ending = view_of(4, 4, 8, 0, 0);
  ending.remaining_s = 500;  // 100 steps left save 500 s: less than the 600 s stop
  CHECK(decide(c, e, ending).empty());
}

TEST_CASE("controller: the precheck runs DLRover's two rounds and replaces the faulty node", "[controller][precheck]") {
  Scenario p;
  p.precheck.enabled = true;
  p.precheck.duration_us = 180 * s;
  const RecoveryController c(p);
  auto out = decide(c, event(control::Signal::Diagnosing), view_of(1, 1, 6, 0, 0));
  REQUIRE(out.size() == 1);
  CHECK(out[0].act == Act::RunPrecheck);
  CHECK(out[0].seconds == Approx(180));
  // DLRover's 6-node example: node 6 is bad; node 5 fails only beside it.
  TablePrecheck runner({{1, 20.1}, {2, 20.2}, {3, 20.3}, {4, 20.4}, {5, 20.5}, {6, 3600}});
  std::vector<control::Action> evict;
  c.precheck({1, 2, 3, 4, 5, 6}, runner, evict);
  CHECK(runner.rounds == 2);
  REQUIRE(evict.size() == 1);
  CHECK(evict[0].act == Act::Replace);
  CHECK(evict[0].node == 6);
}

TEST_CASE("precheck: a node slow in one measurement is measured again and kept, one slow every time is evicted",
          "[controller][precheck]") {
  Scenario p;
  const RecoveryController c(p);
  REQUIRE(p.precheck.confirm_rounds == 1);
  //! A table whose node 3 is slow only in the measurements listed (0-based calls of run_groups).
  struct Noisy final : control::PrecheckRunner {
    std::set<int> slow_in;
    int call = 0;
    std::vector<std::vector<std::vector<int>>> seen;
    std::vector<double> run_groups(const std::vector<std::vector<int>>& groups) override {
      seen.push_back(groups);
      std::vector<double> out;
      for (const auto& g : groups) out.push_back(std::find(g.begin(), g.end(), 3) != g.end() && slow_in.count(call) ? 50.0 : 10.0);
      ++call;
      return out;
    }
    double timeout_s() const override { return 3600; }
  };
  SECTION("slow in both rounds, fine when measured again: kept") {
    Noisy runner;
    runner.slow_in = {0, 1};
    std::vector<control::Action> evict;
    c.precheck({0, 1, 2, 3, 4, 5}, runner, evict);
    CHECK(runner.call == 3);
    REQUIRE(runner.seen[2].size() == 3);  // node 3 beside the fastest healthy node, and two pairs of references
    CHECK(runner.seen[2][0][0] == 3);
    for (std::size_t g = 1; g < 3; ++g) CHECK(std::find(runner.seen[2][g].begin(), runner.seen[2][g].end(), 3) == runner.seen[2][g].end());
    CHECK(evict.empty());
  }
  SECTION("slow every time: evicted after the confirmation") {
    Noisy runner;
    runner.slow_in = {0, 1, 2, 3};
    std::vector<control::Action> evict;
    c.precheck({0, 1, 2, 3, 4, 5}, runner, evict);
    CHECK(runner.call == 3);
    REQUIRE(evict.size() == 1);
    CHECK(evict[0].node == 3);
  }
  SECTION("most nodes failing is the check's fault: nobody is evicted") {
    struct Dead final : control::PrecheckRunner {
      std::vector<double> run_groups(const std::vector<std::vector<int>>& groups) override { return std::vector<double>(groups.size(), 3600.0); }
      double timeout_s() const override { return 3600; }
    } runner;
    std::vector<control::Action> evict;
    c.precheck({0, 1, 2, 3}, runner, evict);
    CHECK(evict.empty());
  }
  SECTION("without confirmations, the two rounds decide") {
    Scenario q;
    q.precheck.confirm_rounds = 0;
    Noisy runner;
    runner.slow_in = {0, 1};
    std::vector<control::Action> evict;
    RecoveryController(q).precheck({0, 1, 2, 3, 4, 5}, runner, evict);
    CHECK(runner.call == 2);
    REQUIRE(evict.size() == 1);
  }
}

TEST_CASE("trial: with no spare, shrinking runs on 3 of 4 replicas and regrows when the node returns", "[controller][elastic]") {
  const TrialConfig shrink = elastic_config(shrink_policies());
  const test::Scripted run = test::run_scripted(shrink, {{1 * day, 0, 3, 0, -1}});
  const Ledger& l = run.result.ledger;
  CHECK(l.total() == run.result.wall_us);
  CHECK(l[Category::WaitingForSpares] == 0);
  CHECK(run.count(EventKind::Shrunk) == 1);
  CHECK(run.count(EventKind::Grown) == 1);
  // Two days of repair on 3 of 4 replicas: a quarter of that time is lost to the shrink.
  CHECK(micros_to_seconds(l[Category::Shrunk]) / 86400 == Approx(0.5).epsilon(0.02));

  Scenario wait_policies;  // the same job, waiting for the node instead
  const test::Scripted waited = test::run_scripted(elastic_config(wait_policies), {{1 * day, 0, 3, 0, -1}});
  CHECK(waited.result.ledger[Category::Shrunk] == 0);
  CHECK(micros_to_seconds(waited.result.ledger[Category::WaitingForSpares]) / 86400 == Approx(2.0).epsilon(0.01));
  CHECK(l[Category::Productive] > waited.result.ledger[Category::Productive]);
}

TEST_CASE("trial: the Xid table turns a reboot into a replacement", "[controller]") {
  Scenario p;
  p.xid_actions[79] = {Act::Reboot, 600 * s};
  TrialConfig c = elastic_config(p);
  c.spare_nodes = 1;
  const test::Scripted run = test::run_scripted(c, {{1 * day, 0, 3, 0, -1}});
  CHECK(run.count(EventKind::ToRepair) == 0);  // the catalogue said replace; the table says reboot
  CHECK(run.count(EventKind::SpareAssigned) == 0);
  CHECK(run.count(EventKind::NodeUp) == 1);
  const test::Scripted catalogue = test::run_scripted(elastic_config(Scenario{}), {{1 * day, 0, 3, 0, -1}});
  CHECK(catalogue.count(EventKind::ToRepair) == 1);
}

TEST_CASE("trial: a straggler is evicted after the observation window instead of dragging the job for days",
          "[controller]") {
  Scenario p;
  p.stragglers.evict = true;
  p.stragglers.observe_us = 900 * s;
  TrialConfig c = elastic_config(p);
  c.spare_nodes = 1;
  const test::Scripted evicted = test::run_scripted(c, {{1 * day, 1, 2, 0, -1}});
  CHECK(evicted.result.ledger.total() == evicted.result.wall_us);
  CHECK(evicted.count(EventKind::Evicted) == 1);
  CHECK(evicted.count(EventKind::SpareAssigned) == 1);
  CHECK(micros_to_seconds(evicted.result.ledger[Category::Degraded]) == Approx(450).margin(1));  // 15 min at half speed

  TrialConfig no_policy = elastic_config(Scenario{});
  no_policy.spare_nodes = 1;
  const test::Scripted dragged = test::run_scripted(no_policy, {{1 * day, 1, 2, 0, -1}});
  CHECK(micros_to_seconds(dragged.result.ledger[Category::Degraded]) / 86400 == Approx(5.5).epsilon(0.01));  // 11 days at half speed
}

TEST_CASE("trial: the precheck in the diagnosis catches the bad node a misdiagnosis left in the job", "[controller][precheck]") {
  Scenario p;
  p.precheck.enabled = true;
  p.precheck.duration_us = 180 * s;
  TrialConfig c = elastic_config(p);
  c.spare_nodes = 4;
  c.shop.misdiagnosis_probability = 1;
  c.shop.recurrence_mean_us = day;
  const test::Scripted checked = test::run_scripted(c, {{1 * day, 0, 3, 0, -1}});
  CHECK(checked.count(EventKind::Misdiagnosed) == 1);
  CHECK(checked.count(EventKind::Evicted) == 1);   // the bad node fails the check
  CHECK(checked.result.fault_counts[0] == 1);       // and never fails the job again
  CHECK(checked.result.ledger[Category::Diagnosis] == 180 * s);

  c.controller = nullptr;
  const test::Scripted unchecked = test::run_scripted(c, {{1 * day, 0, 3, 0, -1}});
  CHECK(unchecked.result.fault_counts[0] >= 2);     // the recurrence strikes (and is misdiagnosed again)
}

TEST_CASE("the drivers agree on a scenario that uses every policy, and the ledger adds up", "[controller][engines]") {
  const Scenario scenario = load_scenario(test::fixture("policies.json"));
  const RunResult native = run_trials(scenario, test::run_options(6, 5));
  const RunResult simgrid = run_trials(scenario, test::run_options(6, 5, 2, EngineKind::Simgrid));
  test::require_same_trials(native, simgrid);
  Micros shrunk = 0;
  for (const auto& t : native.trials) {
    CHECK(t.ledger.total() == t.wall_us);
    shrunk += t.ledger[Category::Shrunk];
  }
  CHECK(shrunk > 0);
}

TEST_CASE("trial: a step model's speed for 3 of 4 replicas sets the shrunk share of the ledger", "[controller][elastic]") {
  TrialConfig config = elastic_config(shrink_policies());
  config.speed_by_replicas = {0, 0.3, 0.6, 0.9, 1.0};  // 3 of 4 replicas run at 90%, not 75%
  const test::Scripted run = test::run_scripted(config, {{1 * day, 0, 3, 0, -1}});
  const Ledger& l = run.result.ledger;
  CHECK(l.total() == run.result.wall_us);
  REQUIRE(run.count(EventKind::Shrunk) == 1);
  // The same two days of repair as above: a tenth of them lost instead of a quarter.
  CHECK(micros_to_seconds(l[Category::Shrunk]) / 86400 == Approx(0.2).epsilon(0.02));
}

TEST_CASE("with no spares and long repairs, shrinking beats waiting on common faults", "[controller][elastic]") {
  const std::string file = test::fixture("policies.json");
  const auto variants = run_variants(read_scenario_document(file), file, {{}, {{"/policies/elastic/mode", "wait"}}},
                                     test::run_options(40, 3));
  const PairedDifference d = paired_difference(variants[1].goodput, variants[0].goodput);
  CHECK(d.paired.ci95_high < 0);  // waiting loses, and the paired CI says so
}

TEST_CASE("optimize over policy combinations picks the best one, separated from the runner-up", "[controller][experiments]") {
  const std::string file = test::fixture("policies.json");
  std::vector<std::vector<Setting>> combinations;
  for (const char* mode : {"wait", "shrink"})
    for (bool evict : {false, true}) combinations.push_back({{"/policies/elastic/mode", mode}, {"/policies/stragglers/evict", evict}});
  OptimizeOptions options;
  options.trials = 20;
  options.max_trials = 160;
  options.jobs = 2;
  const ChoiceResult r = choose_policy(read_scenario_document(file), file, combinations, options);
  CHECK(r.best == 3);  // shrink, and evict stragglers
  CHECK(r.separated);
  CHECK(r.margin.paired.ci95_low > 0);
  CHECK(r.trials >= 20);
  CHECK(r.variants[r.best].summary.mean > r.variants[0].summary.mean);
}

TEST_CASE("a heartbeat watchdog finds hangs in 5 steps instead of the classes' own timeouts", "[controller]") {
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"][0]["effect"] = "hang";
  doc["faults"][0]["detection"] = "30min";
  doc["faults"][0]["recovery"]["action"] = "restart";
  const Scenario nccl_timeout = test::scenario_from(doc);
  doc["policies"]["hang_detection"] = {{"factor", 5}, {"minimum", "1min"}};
  const Scenario watchdog = test::scenario_from(doc);
  const CheckpointCosts costs = resolve_checkpoint_costs(watchdog);
  CHECK(make_trial_config(watchdog, costs).faults[0].detection_us == 60 * s);  // 5 x 10 s steps, at least 1 min
  CHECK(make_trial_config(nccl_timeout, costs).faults[0].detection_us == 1800 * s);
  doc["policies"]["hang_detection"]["minimum"] = "10s";
  CHECK(make_trial_config(test::scenario_from(doc), costs).faults[0].detection_us == 50 * s);
  const RunResult fast = run_trials(watchdog, test::run_options(20, 1));
  const RunResult slow = run_trials(nccl_timeout, test::run_options(20, 1));
  Micros fast_detection = 0, slow_detection = 0;
  for (const auto& t : fast.trials) fast_detection += t.ledger[Category::Detection];
  for (const auto& t : slow.trials) slow_detection += t.ledger[Category::Detection];
  CHECK(fast_detection * 20 < slow_detection);
}
