#pragma once
//! The ledger: every microsecond of a trial's wall time belongs to exactly one category.
//! Integer microseconds, so the categories add up to the wall time exactly (docs/model.md).

#include <array>
#include <cstdint>
#include <numeric>

#include "core/units.hpp"

namespace ctwin {

enum class Category : std::uint8_t {
  Productive,
  CheckpointSave,
  CheckpointRestore,
  LostProgress,
  Detection,
  Diagnosis,
  Restart,
  WaitingForSpares,
  Degraded,            //!< slow nodes and links: the job runs at its slowest part
  PlannedMaintenance,
  Shrunk,              //!< elastic: running with fewer data-parallel replicas than the full job
};
inline constexpr std::size_t kCategoryCount = 11;

//! The fixed public keys of reports, in report order.
inline constexpr std::array<const char*, kCategoryCount> kCategoryKeys{
    "productive", "checkpoint_save", "checkpoint_restore", "lost_progress",      "detection",
    "diagnosis",  "restart",         "waiting_for_spares", "degraded",           "planned_maintenance",
    "shrunk"};

struct Ledger {
  std::array<Micros, kCategoryCount> us{};

  Micros& operator[](Category c) { return us[static_cast<std::size_t>(c)]; }
  Micros operator[](Category c) const { return us[static_cast<std::size_t>(c)]; }
  Micros total() const { return std::accumulate(us.begin(), us.end(), Micros{0}); }
  bool operator==(const Ledger&) const = default;
};

}  // namespace ctwin
