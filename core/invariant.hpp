#pragma once
//! Invariants that stay on in every build, as DuckDB keeps D_ASSERT on: where a broken one would
//! make a wrong number silently (a ledger that does not add up to its wall time, a clock that ran
//! backwards, a restore from a step some rank lacks), the run stops with the invariant's name
//! instead of writing the number. Each check is a comparison on a path taken once per event or
//! less; BENCHMARKS.md ("Invariants") gives what they cost.
//!
//!   CTWIN_INVARIANT(ledger.total() == wall, "the ledger's categories add up to the wall time");

#include <stdexcept>
#include <string>

namespace ctwin {

//! A broken invariant: a bug in ctwin, never bad input (that is BadInput, exit 2).
class InvariantBroken : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

//! Throws InvariantBroken naming the invariant, the condition, where, and `detail` when given.
[[noreturn, gnu::cold]] void invariant_broken(const char* invariant, const char* condition, const char* file, int line,
                                              const std::string& detail = {});

}  // namespace ctwin

#ifndef CTWIN_NO_INVARIANTS
//! Checks `condition`; when false, throws InvariantBroken naming `invariant` (a sentence).
#define CTWIN_INVARIANT(condition, invariant) \
  (__builtin_expect(static_cast<bool>(condition), 1) ? void(0) : ::ctwin::invariant_broken(invariant, #condition, __FILE__, __LINE__))

//! The same, with a detail (the values involved) that is only computed when the check fails, out
//! of line: the path a kept invariant takes is one compare and one branch.
#define CTWIN_INVARIANT_DETAIL(condition, invariant, detail)                                                  \
  (__builtin_expect(static_cast<bool>(condition), 1)                                                           \
       ? void(0)                                                                                               \
       : [&]() __attribute__((cold, noinline)) { ::ctwin::invariant_broken(invariant, #condition, __FILE__, __LINE__, (detail)); }())
#else
// -DCTWIN_INVARIANTS=OFF: only to measure what the checks cost (BENCHMARKS.md); never for a release.
#define CTWIN_INVARIANT(condition, invariant) void(0)
#define CTWIN_INVARIANT_DETAIL(condition, invariant, detail) void(0)
#endif
