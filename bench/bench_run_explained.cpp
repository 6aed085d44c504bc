//! What explaining a run costs (BENCHMARKS.md, issue 48 item 5): CPU seconds of a plain `ctwin run`'s
//! trials, of the same run keeping and gathering its tail (the lowest 5%'s ledgers; a trial it did
//! not keep runs again), and of `--sensitivity` (every assumed field's values on the same seeds), in
//! this process, on every core. Best of three of each.
//!
//!   ctwin_bench_run_explained SCENARIO [TRIALS ...]

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "models/scenario_loader.hpp"
#include "sim/experiments.hpp"
#include "sim/monte_carlo.hpp"
#include "sim/run_sensitivity.hpp"
#include "sim/step_cache.hpp"

using namespace ctwin;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double best_of_three(const std::function<void()>& work) {
  double best = 1e300;
  for (int i = 0; i < 3; ++i) {
    const double start = cpu_seconds();
    work();
    best = std::min(best, cpu_seconds() - start);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ctwin_bench_run_explained SCENARIO [TRIALS ...]\n");
    return 2;
  }
  const std::string path = argv[1];
  std::vector<int> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {1000, 100000};
  Scenario scenario = load_scenario(path);
  resolve_step_time(scenario, path);
  const nlohmann::json document = read_scenario_document(path);
  std::printf("| trials | plain run CPU s | with its tail | tail's share | trials run again | --sensitivity CPU s | x plain |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const int trials : counts) {
    RunOptions options;
    options.trials = trials;
    options.seed = scenario.seed;
    options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    options.keep_trials = false;
    options.keep_goodputs = true;  // what `ctwin run` keeps either way
    const double plain = best_of_three([&] { run_trials(scenario, options); });
    options.tail = true;
    RunResult run;
    const double tailed = best_of_three([&] { run = run_trials(scenario, options); });
    // The tail's trials neither among the tally's lowest nor its first: those ran again.
    const TailTrials which = tail_trials(run.tally.goodputs(), run.tail->p5);
    std::vector<int> lowest;
    for (const LowTrial& t : run.tally.lowest_trials()) lowest.push_back(t.index);
    std::sort(lowest.begin(), lowest.end());
    const auto again = std::count_if(which.indices.begin(), which.indices.end(), [&](int i) {
      return i >= static_cast<int>(RunTally::kKeptTrials) && !std::binary_search(lowest.begin(), lowest.end(), i);
    });
    const double sensitivity = best_of_three([&] {
      run_sensitivity(document, path, scenario, options, run.tally.goodputs(), run.tally.goodput().summary());
    });
    std::printf("| %d | %.3f | %.3f | %+.1f%% | %ld | %.3f | %.1f |\n", trials, plain, tailed, 100 * (tailed / plain - 1),
                static_cast<long>(again), sensitivity + tailed, (sensitivity + tailed) / tailed);
    std::fflush(stdout);
  }
  return 0;
}
