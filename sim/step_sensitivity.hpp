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
  std::string outside_range;  //!< "" when it counts toward the step's range; else why not (it runs)
};

struct FieldSensitivity {
  std::string field;
  std::vector<std::string> pointers;
  bool assumed = false;  //!< the scenario left it out
  std::string base_value;
  std::vector<SensitivityPoint> points;
  double min_s = 0, max_s = 0;  //!< over the points that run
  std::string fastest, slowest; //!< their values
  double range_min_s = 0, range_max_s = 0;  //!< over the points that count toward the range
  int refused = 0;              //!< values that cannot run
};

//! The step as a point (stated and assumed fields as given) and a range over the plausible values
//! of what was assumed. Each assumed field's farthest values, as log ratios to the point, add in
//! quadrature (the fields independent, each at its extreme), with the step model's own error: the
//! preset's worst predicted row on its table, or the presets' median where none is used.
struct StepRange {
  double point_s = 0, min_s = 0, max_s = 0;
  std::vector<std::string> fields;  //!< the assumed fields that move it
  double model_error = 0;           //!< the fraction added for the model itself
  std::string model_error_source;   //!< "preset h100-bf16" or "the presets' median (no preset used)"
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
  StepRange range;
};

StepSensitivity step_sensitivity(const WorkloadSpec& spec, int gpus_per_node, double gpu_memory_bytes, StepCache& cache);

}  // namespace ctwin
