// What a run's report explains beyond its means: where the low quantiles' wall time went (the
// tail, gathered after the run from kept trials or trials run again by index), and how far each
// assumed field's plausible range moves goodput (run --sensitivity, paired on the run's seeds).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "models/scenario_loader.hpp"
#include "sim/experiments.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/run_sensitivity.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

//! The tail's groups from every trial kept whole, as a reference.
RunTail reference_tail(const RunResult& all) {
  std::vector<double> goodputs;
  for (const TrialResult& t : all.trials) goodputs.push_back(goodput(t));
  RunTail tail;
  tail.p5 = summarize(goodputs).p5;
  const TailTrials which = tail_trials(goodputs, tail.p5);
  for (int i : which.indices) {
    const TrialResult& t = all.trials[static_cast<std::size_t>(i)];
    add_to_tail(tail, which, i, t.ledger, t.wall_us, goodputs[static_cast<std::size_t>(i)]);
  }
  return tail;
}

void require_same_shares(const LedgerShares& a, const LedgerShares& b) {
  REQUIRE(a.trials == b.trials);
  REQUIRE(a.trial == b.trial);
  REQUIRE(a.wall_us == b.wall_us);
  for (std::size_t c = 0; c < kCategoryCount; ++c) REQUIRE(a.us[c] == b.us[c]);
}

}  // namespace

TEST_CASE("the tail: the runs at or below p5 and the p5 and median runs, whether kept or run again", "[tail]") {
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["cluster"]["spare_nodes"] = 1;  // a pool that runs dry in the bad runs
  doc["cluster"]["nodes"] = 9;
  doc["job"]["horizon"] = "5d";      // cheap trials: more of them than the tally keeps whole
  doc["faults"][0]["rate"] = "2/gpu-year";
  const Scenario scenario = test::scenario_from(doc);
  const int trials = static_cast<int>(RunTally::kKeptTrials) + 400;
  RunOptions options = test::run_options(trials, 3);
  options.tail = true;
  options.keep_trials = false;
  const RunResult run = run_trials(scenario, options);
  REQUIRE(run.tail);
  RunOptions whole = test::run_options(trials, 3);
  const RunTail expected = reference_tail(run_trials(scenario, whole));
  const RunTail& tail = *run.tail;
  CHECK(tail.p5 == expected.p5);
  CHECK(tail.run_trials == static_cast<std::size_t>(trials));
  require_same_shares(tail.at_or_below_p5, expected.at_or_below_p5);
  require_same_shares(tail.p5_run, expected.p5_run);
  require_same_shares(tail.median_run, expected.median_run);
  CHECK(tail.at_or_below_p5.trials >= static_cast<std::size_t>(trials) / 20);
  // Some of the tail is past the first trials the tally keeps whole: from its lowest trials'
  // ledgers, or run again; as the whole run gave them.
  const TailTrials which = tail_trials(run.tally.goodputs(), tail.p5);
  CHECK(std::any_of(which.indices.begin(), which.indices.end(), [](int i) { return i >= static_cast<int>(RunTally::kKeptTrials); }));
  // Seed 3 (PCG64 streams; 16 under the Mersenne Twister): more trials tie at p5 than the tally
  // keeps the lowest of; those ran again.
  CHECK(run.tally.lowest_trials().size() == static_cast<std::size_t>(0.05 * (trials - 1)) + 2);
  CHECK(tail.at_or_below_p5.trials > run.tally.lowest_trials().size());
  // The shares of each group add up to its wall time, and the low runs waited for spares the median did not.
  double sum = 0;
  for (std::size_t c = 0; c < kCategoryCount; ++c) sum += tail.at_or_below_p5.share(c);
  CHECK(sum == Approx(1.0));
  CHECK(tail.at_or_below_p5.goodput() <= tail.p5);
  CHECK(tail.at_or_below_p5.share(static_cast<std::size_t>(Category::WaitingForSpares)) >
        tail.median_run.share(static_cast<std::size_t>(Category::WaitingForSpares)));
  CHECK(tail.at_or_below_p5.largest_loss() == static_cast<std::size_t>(Category::WaitingForSpares));
}

TEST_CASE("run sensitivity: each assumed field over its range, paired on the run's trials, skipped fields with a reason", "[sensitivity]") {
  const std::string file = test::fixture("minimal.json");
  const nlohmann::json doc = test::read_json(file);
  const Scenario scenario = load_scenario(file);
  RunOptions options = test::run_options(40, 7);
  options.keep_goodputs = true;
  const RunResult run = run_trials(scenario, options);
  const RunSensitivity s = run_sensitivity(doc, file, scenario, options, run.tally.goodputs(), run.tally.goodput().summary());
  REQUIRE(s.fields.size() == 6);
  auto field = [&](const std::string& name) -> const RunSensitivityField& {
    return *std::find_if(s.fields.begin(), s.fields.end(), [&](const RunSensitivityField& f) { return f.field.field == name; });
  };
  // Spares: 1 and 4 of the scenario's 2, the cluster grown to hold 4; the same as a sweep of those settings.
  const RunSensitivityField& spares = field("spare nodes");
  REQUIRE(spares.points.size() == 2);
  CHECK(spares.points[0].value == "1");
  CHECK(spares.points[1].value == "4");
  const auto swept = run_variants(doc, file, {{{"/cluster/spare_nodes", 4}, {"/cluster/nodes", 12}}}, options);
  CHECK(spares.points[1].goodput.mean == swept[0].summary.mean);
  CHECK(spares.points[1].vs_given.mean == Approx(paired_difference(swept[0].goodput, run.tally.goodputs()).paired.mean));
  CHECK(spares.points[0].vs_given.mean <= 0);
  CHECK(spares.points[1].vs_given.mean >= 0);
  CHECK(field("repair time").points[0].value == format_duration(86400));
  CHECK(field("restart overhead").points.size() == 2);
  CHECK(field("detection times").points[1].value == "x2");
  // No class states a rate_uncertainty: the two rate fields are skipped, and say why.
  CHECK(field("fleet spread").field.skipped == "no class states a fleet_sigma");
  CHECK(field("rate uncertainty").field.skipped == "no class states a rate_uncertainty");
  // The field that moves it most is the widest range; the envelope holds every point.
  double widest = 0;
  for (const RunSensitivityField& f : s.fields) {
    widest = std::max(widest, f.max - f.min);
    for (const RunSensitivityPoint& p : f.points) {
      CHECK(p.excluded.empty());
      CHECK(p.goodput.mean >= s.min);
      CHECK(p.goodput.mean <= s.max);
    }
  }
  CHECK(field(s.most).max - field(s.most).min == widest);

  // With the rates held exact for the run, the rate fields are skipped for that reason.
  options.rate_uncertainty = false;
  for (const AssumedField& f : assumed_fields(doc, scenario, options))
    if (f.field == "fleet spread") CHECK(f.skipped == "the run holds the rates exact (--rate-uncertainty off)");
}

TEST_CASE("run sensitivity: the restart overhead scales the in-process and warm-standby restarts in force with the relaunch", "[sensitivity]") {
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["faults"].push_back({{"name", "software"}, {"rate", "5/node-year"}, {"effect", "crash"}, {"detection", "10s"},
                           {"recovery", {{"action", "restart"}, {"duration", "0s"}}}});
  doc["restart"] = {{"overhead", "5min"}, {"mechanism", "in_process"}, {"in_process", {{"overhead", "20s"}}}, {"warm_standby", {{"overhead", "1min"}}}};
  const Scenario scenario = test::scenario_from(doc, "in_process.json");
  RunOptions options = test::run_options(40, 7);
  options.keep_goodputs = true;
  const RunResult run = run_trials(scenario, options);
  const RunSensitivity s = run_sensitivity(doc, "in_process.json", scenario, options, run.tally.goodputs(), run.tally.goodput().summary());
  const auto it = std::find_if(s.fields.begin(), s.fields.end(), [](const RunSensitivityField& f) { return f.field.field == "restart overhead"; });
  REQUIRE(it != s.fields.end());
  CHECK(it->field.given == format_duration(300) + " (in process " + format_duration(20) + ", warm standby " + format_duration(60) + ")");
  REQUIRE(it->points.size() == 2);
  CHECK(it->points[0].value == "x0.5");
  // Twice every start: the same as a run with the three overheads doubled, and below the given run on the same trials.
  const auto doubled = run_variants(doc, "in_process.json",
                                    {{{"/restart/overhead", "600000000us"}, {"/restart/in_process/overhead", "40000000us"},
                                      {"/restart/warm_standby/overhead", "120000000us"}}},
                                    options);
  CHECK(it->points[1].goodput.mean == doubled[0].summary.mean);
  CHECK(it->points[1].vs_given.mean < 0);
  CHECK(it->points[0].vs_given.mean > 0);
  // Only the relaunch's doubled: the in-process restarts (most of them) unchanged, a smaller loss.
  const auto relaunch_only = run_variants(doc, "in_process.json", {{{"/restart/overhead", "600000000us"}}}, options);
  CHECK(relaunch_only[0].summary.mean > doubled[0].summary.mean);
}

TEST_CASE("the trial at a goodput quantile is the stable sort's, ties to the lower index, without sorting", "[tail]") {
  Rng rng(5);
  std::vector<double> goodputs;
  for (int i = 0; i < 3001; ++i) goodputs.push_back(static_cast<double>(rng() % 97) / 96.0);  // many ties, zeros, ones
  std::vector<int> order(goodputs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return goodputs[static_cast<std::size_t>(a)] < goodputs[static_cast<std::size_t>(b)]; });
  for (double q : {0.0, 0.05, 0.5, 0.95, 1.0, 0.333}) {
    INFO("q " << q);
    CHECK(trial_at_goodput_quantile(goodputs, q) == order[static_cast<std::size_t>(std::lround(q * 3000))]);
  }
  CHECK(trial_at_goodput_quantile({0.5}, 0.5) == 0);
}
