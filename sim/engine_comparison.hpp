#pragma once
//! The same trials on both engines (same seeds, same faults), compared: what the native engine's
//! closed forms miss of what SimGrid computed on the fabric, per ledger category, as the mean
//! difference and the largest in any one trial as a share of its wall time.

#include <array>

#include "sim/monte_carlo.hpp"
#include "sim/statistics.hpp"

namespace ctwin {

struct EngineComparison {
  int trials = 0;
  double goodput_native = 0, goodput_simgrid = 0;
  Summary goodput_difference;                          //!< simgrid - native, paired by trial
  std::array<double, kCategoryCount> mean_hours{};     //!< simgrid - native, mean per trial
  std::array<double, kCategoryCount> largest_share{};  //!< max over trials of |difference| / wall
  double largest_wall_share = 0;                       //!< max over trials of |wall difference| / wall
};

//! Both results must hold the same trials (same seed, first trial and count): "native" is the
//! approximation, "simgrid" the reference.
EngineComparison compare_engines(const RunResult& native, const RunResult& simgrid);

}  // namespace ctwin
