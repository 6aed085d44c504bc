#pragma once
//! How much the layout fields a scenario left unsaid can move its step time: each plausible value
//! of each field (models/layout_variants.hpp) run through the step model, one field at a time, the
//! others as the scenario has them. The range that matters is over the fields that were assumed;
//! stated fields are varied too, for a planner asking what a change would buy.

#include <string>
#include <vector>

#include "models/workload.hpp"
#include "sim/step_cache.hpp"

namespace ctwin {

struct SensitivityPoint {
  std::string value;
  double step_s = 0;     //!< 0 when excluded
  std::string excluded;  //!< "" when it runs; else why it cannot
};

struct FieldSensitivity {
  std::string field;
  std::vector<std::string> pointers;
  bool assumed = false;  //!< the scenario left it out
  std::string base_value;
  std::vector<SensitivityPoint> points;
  double min_s = 0, max_s = 0;  //!< over the points that run
  std::string fastest, slowest; //!< their values
};

struct StepSensitivity {
  double base_s = 0;
  std::vector<FieldSensitivity> fields;
  //! Over the assumed fields (every field when none was assumed): one field at a time.
  double min_s = 0, max_s = 0;
  std::string most;            //!< the field of those that moves the step time most ("" if none moves it)
  bool over_assumed = false;   //!< the range is over assumed fields
  //! Over every field, stated ones too: what a change of layout could buy or cost.
  double min_all_s = 0, max_all_s = 0;
  std::string most_all;
};

StepSensitivity step_sensitivity(const WorkloadSpec& spec, int gpus_per_node, double gpu_memory_bytes, StepCache& cache);

}  // namespace ctwin
