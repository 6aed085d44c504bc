#pragma once
//! The plausible values of the layout fields a published run rarely states (rank order, sequence
//! parallelism, virtual stages, the schedule, recomputation, activation offload, the embedding/loss
//! split, the CP algorithm, the micro-batch; and the efficiencies by published stack), each
//! as a copy of the workload with that one field changed. `ctwin step --sensitivity` runs them to
//! say how much an unstated field can move the step time.
//!
//! Plausible means what a framework offers and the cluster can hold: the tensor dimension stays
//! fastest (it must stay inside NVLink), the other three in any order; interleaving by any count
//! that divides every stage's layers; micro-batches that divide a replica's share of the batch,
//! up to 16. A variant the layout check or the GPU's memory refuses is kept, with the reason.

#include <string>
#include <string_view>
#include <vector>

#include "models/workload.hpp"

namespace ctwin {

struct LayoutVariant {
  std::string value;     //!< as the scenario would write it
  Workload workload;     //!< the base with this field changed
  std::string excluded;  //!< "" when it runs; else why it cannot (the layout check's or memory's reason)
};

struct LayoutField {
  std::string name;                   //!< e.g. "sequence_parallel"
  std::vector<std::string> pointers;  //!< the scenario fields it stands for (the split is two)
  std::string base_value;
  std::vector<LayoutVariant> variants;  //!< every plausible value, the base's among them
  //! The collectives' sizes and groups do not depend on it (only how they overlap and how often
  //! they run): the base's simulated collectives serve every variant.
  bool same_collectives = false;
};

//! The fields that apply to this layout (no CP algorithm without CP), in a fixed order.
std::vector<LayoutField> plausible_layouts(const Workload& w, int gpus_per_node, double gpu_memory_bytes);

//! The achieved efficiencies over what published stacks and kernels reach on this GPU
//! (models/efficiency_presets.hpp): the layers' GEMMs by software stack, the attention core by
//! kernel. Every variant runs (the layout is the base's).
std::vector<LayoutField> plausible_efficiencies(const Workload& w, std::string_view gpu_model);

}  // namespace ctwin
