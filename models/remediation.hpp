#pragma once
//! The one remediation vocabulary: what a fault class, the Xid policy and the controller ask for,
//! with the one table of its names (scenarios, policy files, the catalogue, logs).

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ctwin {

enum class Act : std::uint8_t {
  None,           //!< nothing to do (for the controller: keep waiting); a fault class that stops nothing
  Restart,        //!< relaunch the job on the same nodes
  ResetGpu,
  Reboot,
  Replace,        //!< evict the node; a spare takes its place
  CheckpointNow,
  Shrink,         //!< drop whole data-parallel replicas
  Grow,           //!< add replicas back (a restart)
  RunPrecheck,    //!< run the node check before relaunching
  TopUp,          //!< order nodes for the spare pool: `nodes` of them, there in `seconds`
  ExpediteRepairs,  //!< every node in the repair shop back within `seconds` (the pool is dry)
};

//! What a fault class's `recovery.action` may name.
inline constexpr Act kFaultActions[] = {Act::None, Act::Restart, Act::ResetGpu, Act::Reboot, Act::Replace};
//! What brings a failed part back: an escalation's or the Xid policy's action.
inline constexpr Act kRepairActions[] = {Act::Restart, Act::ResetGpu, Act::Reboot, Act::Replace};

//! none, restart, reset_gpu, reboot, replace, checkpoint_now, shrink, grow, precheck, top_up, expedite_repairs.
const char* to_string(Act act);
//! The act `name` names among `allowed`; nullopt when it names none of them.
std::optional<Act> act_named(std::string_view name, std::span<const Act> allowed);
//! Restart, reset, reboot or replace: an act that brings a failed part back.
inline bool is_repair(Act act) { return act >= Act::Restart && act <= Act::Replace; }

}  // namespace ctwin
