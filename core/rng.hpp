#pragma once
//! Random streams. Trial i of a run with seed S draws from its own engine seeded by
//! `trial_seed(S, i)`, so results do not depend on how trials are spread over threads or processes.

#include <cstdint>

#include <pcg_random.hpp>

namespace ctwin {

//! SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijection that scatters nearby inputs.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

//! The documented splitter: seed of trial i = splitmix64(splitmix64(S) + i).
inline std::uint64_t trial_seed(std::uint64_t run_seed, std::uint64_t trial_index) {
  return splitmix64(splitmix64(run_seed) + trial_index);
}

//! PCG64 (O'Neill 2014; Debian's libpcg-cpp-dev): the same sequence on every platform and standard
//! library, and seeded in constant time. A trial seeds a dozen streams (its faults, its fleet and
//! each uncertain rate, the repair shop, the controller); the Mersenne Twister's 312-word state took
//! ~0.7 us each to seed, a tenth of a 10k-GPU trial (issue 52).
using Rng = pcg64;

}  // namespace ctwin
