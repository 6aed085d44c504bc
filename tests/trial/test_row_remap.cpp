// ECC as a GPU's state: a double-bit error (Xid 48) leaves a row remap pending (Xid 63) until the
// GPU is reset; each remap takes a spare row; a failed one, or none left, is Xid 64 and an RMA.
#include <catch2/catch.hpp>

#include <algorithm>

#include "trial/trial.hpp"
#include "support/scripted.hpp"

using namespace ctwin;

namespace {

constexpr Micros s = kMicrosPerSecond;

FaultClass dbe(Act action, int spare_rows, double failure_probability = 0) {
  FaultClass f;
  f.name = std::string(12, 'd');
  f.effect = Effect::Crash;
  f.action = action;
  f.detection_us = 10 * s;
  f.action_us = 60 * s;
  f.xid = 48;
  f.remap = FaultClass::RowRemap{spare_rows, failure_probability, 120 * s};
  return f;
}

//! Another fault of the GPU or node, whose action resets (or reboots) it.
FaultClass crash(Act action) {
  FaultClass f;
  f.name = std::string(12, 'r');
  f.effect = Effect::Crash;
  f.action = action;
  f.detection_us = 10 * s;
  f.action_us = 60 * s;
  return f;
}

TrialConfig config(const std::vector<FaultClass>& faults) {
  TrialConfig c;
  c.job_nodes = 2;
  c.spare_nodes = 1;
  c.repair_us = 100'000 * s;
  c.interval_us = 100 * s;
  c.save_us = 10 * s;
  c.end_us = 20'000 * s;
  c.faults = faults;
  return c;
}

//! Strikes of class `c` on slot 0, GPU 3, at the given times.
std::vector<FaultStrike> on_gpu3(const std::vector<std::pair<Micros, std::uint32_t>>& at) {
  std::vector<FaultStrike> out;
  for (auto [t, c] : at) out.push_back({t, c, 0, 3, -1});
  return out;
}

int remap_failures(const test::Scripted& r) {
  return static_cast<int>(std::count_if(r.events.begin(), r.events.end(),
                                        [](const RunEvent& e) { return e.kind == EventKind::Escalated && e.code == 64; }));
}

}  // namespace

TEST_CASE("each reset applies the pending remap, and the one past the spare rows is an RMA", "[trial][ecc]") {
  // Two spare rows: the first two double-bit errors are remapped at their GPU resets; the third
  // finds none left (Xid 64), and the node is replaced in the remap's replace time.
  const auto r = test::run_scripted(config({dbe(Act::ResetGpu, 2)}), on_gpu3({{1000 * s, 0}, {4000 * s, 0}, {8000 * s, 0}}));
  CHECK(remap_failures(r) == 1);
  CHECK(r.count(EventKind::ToRepair) == 1);
  CHECK(r.result.ledger[Category::Restart] == 60 * s + 60 * s + 120 * s);  // two resets, then the swap
  CHECK(r.slots[0] == 2);  // the spare took slot 0
  CHECK(r.result.ledger.total() == r.result.wall_us);
}

TEST_CASE("a remap stays pending until the GPU is reset, by any fault", "[trial][ecc]") {
  // The double-bit error's class only restarts the process: its remap waits (Xid 63 pending).
  // A later fault that resets the GPU applies it; with no spare rows, that reset is an RMA.
  const FaultClass reset = crash(Act::ResetGpu);
  const TrialConfig c = config({dbe(Act::Restart, 0), reset});
  const auto pending = test::run_scripted(c, on_gpu3({{1000 * s, 0}, {3000 * s, 0}}));
  CHECK(remap_failures(pending) == 0);  // never reset: still pending, no row used
  CHECK(pending.count(EventKind::ToRepair) == 0);
  const auto applied = test::run_scripted(c, on_gpu3({{1000 * s, 0}, {5000 * s, 1}}));
  CHECK(remap_failures(applied) == 1);
  CHECK(applied.count(EventKind::ToRepair) == 1);
  // A reset of another GPU of the node leaves it pending; a reboot clears the whole node.
  std::vector<FaultStrike> other_gpu = on_gpu3({{1000 * s, 0}});
  other_gpu.push_back({5000 * s, 1, 0, 5, -1});
  CHECK(remap_failures(test::run_scripted(c, other_gpu)) == 0);
  const auto rebooted = test::run_scripted(config({dbe(Act::Restart, 0), crash(Act::Reboot)}), [] {
    std::vector<FaultStrike> v = on_gpu3({{1000 * s, 0}});
    v.push_back({5000 * s, 1, 0, 5, -1});
    return v;
  }());
  CHECK(remap_failures(rebooted) == 1);
}

TEST_CASE("a remap that fails is an RMA, and the new GPU starts with every spare row", "[trial][ecc]") {
  const auto r = test::run_scripted(config({dbe(Act::ResetGpu, 8, 1.0)}), on_gpu3({{1000 * s, 0}}));
  CHECK(remap_failures(r) == 1);
  CHECK(r.count(EventKind::ToRepair) == 1);
  // One spare row: the second error's remap is an RMA; the spare node that takes slot 0 has a
  // fresh GPU, whose first remap fits.
  const auto fresh = test::run_scripted(config({dbe(Act::ResetGpu, 1)}), on_gpu3({{1000 * s, 0}, {4000 * s, 0}, {8000 * s, 0}}));
  CHECK(remap_failures(fresh) == 1);
  CHECK(fresh.slots[0] == 2);
  // Never failing and plenty of rows: resets only.
  const auto fine = test::run_scripted(config({dbe(Act::ResetGpu, 8, 0.0)}), on_gpu3({{1000 * s, 0}, {4000 * s, 0}}));
  CHECK(remap_failures(fine) == 0);
  CHECK(fine.count(EventKind::ToRepair) == 0);
}

TEST_CASE("correctable errors accumulate on their GPU, and every after-th asks for a remap", "[trial][ecc]") {
  FaultClass sbe;  // counted only: corrected single-bit errors (Xid 92's storms)
  sbe.name = std::string(12, 'c');
  sbe.effect = Effect::None;
  sbe.action = Act::None;
  sbe.xid = 92;
  sbe.remap = FaultClass::RowRemap{0, 0.0, 120 * s, 3};  // no spare rows: the remap is an RMA
  const FaultClass reset = crash(Act::ResetGpu);
  const TrialConfig c = config({sbe, reset});
  // Two corrected errors, then a reset: nothing pending yet, nothing to apply.
  const auto two = test::run_scripted(c, on_gpu3({{1000 * s, 0}, {2000 * s, 0}, {5000 * s, 1}}));
  CHECK(remap_failures(two) == 0);
  CHECK(two.result.ledger[Category::Productive] > 0);
  // A third (on the same GPU) asks for a remap; the reset applies it and finds no spare row.
  const auto three = test::run_scripted(c, on_gpu3({{1000 * s, 0}, {2000 * s, 0}, {3000 * s, 0}, {5000 * s, 1}}));
  CHECK(remap_failures(three) == 1);
  CHECK(three.count(EventKind::ToRepair) == 1);
  // Three spread over two GPUs ask for nothing.
  std::vector<FaultStrike> spread = on_gpu3({{1000 * s, 0}, {2000 * s, 0}});
  spread.push_back({3000 * s, 0, 0, 5, -1});
  spread.push_back({5000 * s, 1, 0, 3, -1});
  CHECK(remap_failures(test::run_scripted(c, spread)) == 0);
}
