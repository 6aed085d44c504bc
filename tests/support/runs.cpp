#include "support/runs.hpp"

#include <catch2/catch.hpp>

namespace ctwin::test {

RunOptions run_options(int trials, std::uint64_t seed, int jobs, EngineKind engine) {
  RunOptions options;
  options.trials = trials;
  options.seed = seed;
  options.jobs = jobs;
  options.engine = engine;
  return options;
}

void require_same_trials(const RunResult& a, const RunResult& b) {
  REQUIRE(a.trials.size() == b.trials.size());
  for (std::size_t i = 0; i < a.trials.size(); ++i) {
    INFO("trial " << i);
    REQUIRE(a.trials[i].seed == b.trials[i].seed);
    REQUIRE(a.trials[i].ledger == b.trials[i].ledger);
    REQUIRE(a.trials[i].wall_us == b.trials[i].wall_us);
    REQUIRE(a.trials[i].fault_counts == b.trials[i].fault_counts);
    REQUIRE(a.trials[i].interruptions_by_class == b.trials[i].interruptions_by_class);
    REQUIRE(a.trials[i].checkpoints == b.trials[i].checkpoints);
    REQUIRE(a.trials[i].interruptions == b.trials[i].interruptions);
    REQUIRE(a.trials[i].finished_work == b.trials[i].finished_work);
  }
}

}  // namespace ctwin::test
