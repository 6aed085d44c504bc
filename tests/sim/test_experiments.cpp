// Sweeps, the optimizer and paired comparisons, all on common random numbers.
#include <catch2/catch.hpp>

#include "sim/experiments.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("optimize finds Daly's worked optima by simulation", "[experiments]") {
  // Daly (2006): restart 10 min, delta = 5 min: 117 min at M = 24 h, 57 min at 6 h, 9.1 min at 15 min.
  // The optimizer never sees the formula: it simulates a grid on common random numbers and fits.
  struct Case {
    double mtbf_s, expected_min;
  };
  for (const Case& c : {Case{24 * 3600, 117}, Case{6 * 3600, 57}, Case{15 * 60, 9.1}}) {
    const auto doc = test::renewal_scenario(c.mtbf_s, 3600, 300, 600, 1000 * c.mtbf_s);
    OptimizeOptions options;
    options.from_s = c.expected_min * 60 / 3;  // a bracket that is not centred on the answer
    options.to_s = c.expected_min * 60 * 2.5;
    options.points = 21;
    options.trials = 300;
    options.jobs = 2;
    options.seed = 7;
    const OptimizeResult r = optimize_interval(doc, "renewal.json", options);
    INFO("M = " << c.mtbf_s / 3600 << " h: best " << r.best_interval_s / 60 << " min [" << r.best_ci_low_s / 60 << ", "
                << r.best_ci_high_s / 60 << "], Daly " << c.expected_min << " min");
    CHECK(r.fitted);
    CHECK(r.best_interval_s / 60 == Approx(c.expected_min).epsilon(0.05));
    CHECK(r.best_ci_low_s <= r.best_interval_s);
    CHECK(r.best_interval_s <= r.best_ci_high_s);
  }
}

TEST_CASE("changing the restart cost or the save time moves the optimum as the simulation says", "[experiments]") {
  OptimizeOptions options;
  options.points = 15;
  options.trials = 200;
  options.jobs = 2;
  options.from_s = 600;
  options.to_s = 12000;
  const double mtbf = 6 * 3600;
  const auto short_save = optimize_interval(test::renewal_scenario(mtbf, 3600, 60, 600, 1000 * mtbf), "a.json", options);
  const auto long_save = optimize_interval(test::renewal_scenario(mtbf, 3600, 600, 600, 1000 * mtbf), "b.json", options);
  CHECK(long_save.best_interval_s > 2 * short_save.best_interval_s);  // sqrt(10) = 3.2x in theory
}

TEST_CASE("paired comparisons have a narrower interval than unpaired ones", "[experiments]") {
  const auto doc = test::read_json(test::fixture("features.json"));
  RunOptions options = test::run_options(200, 5);
  const auto results = run_variants(doc, "features.json",
                                    {{{"/policies/checkpoint/interval", "40min"}}, {{"/policies/checkpoint/interval", "60min"}}},
                                    options);
  const PairedDifference d = paired_difference(results[1].goodput, results[0].goodput);
  CHECK(d.paired.mean == Approx(d.unpaired.mean));
  const double paired_width = d.paired.ci95_high - d.paired.ci95_low;
  const double unpaired_width = d.unpaired.ci95_high - d.unpaired.ci95_low;
  INFO("paired " << paired_width << ", unpaired " << unpaired_width);
  CHECK(paired_width < 0.5 * unpaired_width);
}

TEST_CASE("a bad --set value is reported against its pointer", "[experiments]") {
  const auto doc = test::read_json(test::fixture("minimal.json"));
  CHECK_THROWS_WITH(scenario_variant(doc, "m.json", {{"/cluster/spare_nodes", parse_setting_value("-4")}}),
                    Catch::Contains("m.json: /cluster/spare_nodes: must be between 0"));
  CHECK(parse_setting_value("10min") == "10min");
  CHECK(parse_setting_value("8") == 8);
}
