#pragma once
//! The checkpoint cadence the master hands the trainers, as JSON: in a plan and in the file each
//! node's trainers read ($CTWIN_CONTROL_FILE).

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "policies/checkpoint_policy.hpp"

namespace ctwin::live {

//! The checkpoint cadence as the protocol and the trainers' file write it:
//! {"revision": R, "changes": [{"from": S, "every": N}, ...]}.
nlohmann::json cadence_to_json(const CheckpointCadence& cadence);
//! The cadence in a trainer's file; nullopt when absent or unreadable (the trainer keeps its own).
std::optional<CheckpointCadence> read_cadence_file(const std::string& path);

}  // namespace ctwin::live
