#pragma once
//! The scenario's recovery actions in the controller's vocabulary, and back.

#include "models/scenario.hpp"
#include "policies/controller.hpp"

namespace ctwin {

inline control::Act to_act(RecoveryAction action) {
  switch (action) {
    case RecoveryAction::None: return control::Act::Wait;
    case RecoveryAction::Restart: return control::Act::Restart;
    case RecoveryAction::ResetGpu: return control::Act::ResetGpu;
    case RecoveryAction::Reboot: return control::Act::Reboot;
    case RecoveryAction::Replace: return control::Act::Replace;
  }
  return control::Act::Restart;
}

//! nullopt: not an action that recovers a failed part (shrink, grow, precheck...).
inline std::optional<RecoveryAction> to_recovery(control::Act act) {
  switch (act) {
    case control::Act::Restart: return RecoveryAction::Restart;
    case control::Act::ResetGpu: return RecoveryAction::ResetGpu;
    case control::Act::Reboot: return RecoveryAction::Reboot;
    case control::Act::Replace: return RecoveryAction::Replace;
    default: return std::nullopt;
  }
}

}  // namespace ctwin
