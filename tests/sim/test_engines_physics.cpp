// The two engines on the same trials, where their physics differ: a flash-checkpointed job whose
// storage shares the 16k-GPU rail-optimized fabric (leaf, spine and cable faults included). With
// contention off they price every transfer alike and agree trial by trial within 0.1% of the
// ledger; with it on, SimGrid measures what a persist costs the training beside it.
#include <catch2/catch.hpp>

#include <fstream>

#include <nlohmann/json.hpp>

#include "models/scenario_loader.hpp"
#include "sim/engine_comparison.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

//! The 16k scenario, flash-checkpointed every 5 minutes (240 GB a node, about 5 s at the node's
//! share of storage), and a step whose data-parallel reduction saturates the node link for the
//! last 3 of its 6.2 s: each persist meets one reduction.
Scenario fabric_flash(const std::string& reduction) {
  std::ifstream in(test::repo_file("scenarios/llama3_405b_16k_full.json"));
  nlohmann::json d = nlohmann::json::parse(in);
  d["checkpoint"].update({{"mechanism", "flash"}, {"snapshot_time", "2s"}, {"memory_restore_time", "20s"}, {"size_per_gpu", "30GB"}});
  d["cluster"]["storage"].update({{"write_bandwidth", "400GB/s"}, {"network_bandwidth", "3.2Tbps"}});
  d["job"]["dp_reduction"] = {{"time", reduction}, {"exposed", "0.5s"}};
  d["policies"]["checkpoint"] = {{"type", "fixed"}, {"interval", "5min"}};
  return parse_scenario(d.dump(), "fabric_flash");
}

//! Every category of every trial, and the wall time, within 0.1% of the ledger.
void check_agree_within_a_thousandth(const EngineComparison& c) {
  for (std::size_t k = 0; k < kCategoryCount; ++k) {
    INFO(kCategoryKeys[k]);
    CHECK(c.largest_share[k] <= 1e-3);
  }
  CHECK(c.largest_wall_share <= 1e-3);
}

}  // namespace

TEST_CASE("with contention off the engines agree trial by trial within 0.1% of the ledger", "[engines][simgrid]") {
  const Scenario s = fabric_flash("3s");
  RunOptions options = test::run_options(40, 11);
  options.contention = false;
  const RunResult native = run_trials(s, options);
  options.engine = EngineKind::Simgrid;
  const RunResult simgrid = run_trials(s, options);
  check_agree_within_a_thousandth(compare_engines(native, simgrid));

  // The faults reached the physics: restores by a few readers, spines out.
  std::int64_t network_faults = 0;
  for (const auto& t : native.trials)
    for (std::size_t f = 0; f < s.faults.size(); ++f)
      if (is_network(s.faults[f].rate.component)) network_faults += t.fault_counts[f];
  CHECK(network_faults > 0);
}

TEST_CASE("with contention on, SimGrid sees persists slow the training, and both engines say how much", "[engines][simgrid]") {
  const Scenario s = fabric_flash("3s");
  RunOptions options = test::run_options(20, 11);
  const RunResult native = run_trials(s, options);
  options.engine = EngineKind::Simgrid;
  const RunResult simgrid = run_trials(s, options);
  RunOptions off = options;
  off.contention = false;
  const RunResult quiet = run_trials(s, off);
  const EngineComparison against_quiet = compare_engines(quiet, simgrid);
  // Training lost to persists is checkpoint overhead: more of it, less productive time.
  CHECK(against_quiet.mean_hours[static_cast<std::size_t>(Category::CheckpointSave)] > 0.5);
  CHECK(against_quiet.goodput_difference.ci95_high < 0);
  // The native engine approximates it; the difference is what --engine both reports.
  const EngineComparison error = compare_engines(native, simgrid);
  CHECK(error.largest_share[static_cast<std::size_t>(Category::CheckpointSave)] > 0);
  CHECK(std::abs(error.goodput_difference.mean) < std::abs(against_quiet.goodput_difference.mean));
}

TEST_CASE("peer replicas priced on the fabric: the engines agree, and lost nodes restore from peers", "[engines][simgrid]") {
  Scenario s = fabric_flash("3s");
  s.checkpoint.memory_restore_us = 2 * kMicrosPerSecond;
  s.checkpoint.peer_replicas = true;  // times not given: each copy crosses the node's NICs and its group's uplinks
  RunOptions options = test::run_options(30, 5);
  options.contention = false;
  const RunResult native = run_trials(s, options);
  REQUIRE(native.config.physics_replicas);
  REQUIRE(native.config.physics_peer_restores);
  options.engine = EngineKind::Simgrid;
  const RunResult simgrid = run_trials(s, options);
  check_agree_within_a_thousandth(compare_engines(native, simgrid));
  // Against storage alone: a lost node reads 240 GB from a peer over 400 GB/s of NICs instead of
  // waiting on storage's 28 GB/s of disks: restores take less time.
  Scenario storage_only = fabric_flash("3s");
  storage_only.checkpoint.memory_restore_us = s.checkpoint.memory_restore_us;
  options.engine = EngineKind::Native;
  const RunResult storage = run_trials(storage_only, options);
  const EngineComparison gain = compare_engines(storage, native);
  CHECK(gain.mean_hours[static_cast<std::size_t>(Category::CheckpointRestore)] < 0);
  CHECK(gain.goodput_difference.mean > 0);
}
