#pragma once
//! Step times by cluster state, computed once: in memory for the life of the process and on disk
//! (one JSON file per state, in $CTWIN_CACHE_DIR, else $XDG_CACHE_HOME/ctwin, else ~/.cache/ctwin),
//! so sweeps and later runs reuse them. A state's signature hashes everything the step depends
//! on, and the model's version: a changed model never reads an old answer.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "models/scenario.hpp"
#include "sim/step_model.hpp"

namespace ctwin {

class StepCache {
 public:
  //! `directory` empty: memory only.
  explicit StepCache(std::string directory = default_directory());
  static std::string default_directory();
  static StepCache& shared();  //!< the process's cache, on the default directory

  static std::uint64_t signature(const WorkloadSpec& spec, const StepState& state);
  //! Null when the state has not been computed in this process (no disk access: the hot path).
  const StepBreakdown* find(std::uint64_t signature) const;
  //! From memory, else from disk, else simulated (and stored in both).
  StepBreakdown get(const WorkloadSpec& spec, const StepState& state);
  //! The same, computed by `compute` when neither has it (it must give what step_time would).
  StepBreakdown get(const WorkloadSpec& spec, const StepState& state, const std::function<StepBreakdown()>& compute);

  //! Job speed (tokens/s over the full width's) at each data-parallel width in `widths`. At most
  //! `anchors` widths are simulated, spread geometrically; between them the collectives' times are
  //! interpolated linearly in the width and the step is assembled exactly (micro-batches, bubble,
  //! exposure): one simulation per width would cost minutes for a 16k-GPU layout's 128 widths.
  std::vector<double> speeds_at_widths(const WorkloadSpec& spec, const std::vector<int>& widths, int anchors = 5);

  int simulated() const { return simulated_; }
  int read_from_disk() const { return read_from_disk_; }

 private:
  std::string directory_;
  mutable std::mutex mutex_;
  std::unordered_map<std::uint64_t, StepBreakdown> memory_;
  int simulated_ = 0, read_from_disk_ = 0;
};

//! With a workload and no step time, the step time (and the work given in steps) from the step model.
void resolve_step_time(Scenario& scenario, const std::string& file);

}  // namespace ctwin
