#include "models/xid_table.hpp"

#include <algorithm>

namespace ctwin {

namespace {

// NVIDIA's immediate resolutions: RESTART_APP -> Restart, RESET_GPU -> ResetGpu, RESTART_BM ->
// Reboot, IGNORE -> None (counted only). The workflows: Xid 48 and 74 need a GPU reset or a node
// reboot (ResetGpu), and so do NVLink5's 144-150 in their fatal statuses; 45 is cleanup after another Xid and 154 a summary of the action another needs
// (None); 61 is unused on Ampere and later (None).
constexpr XidInfo kTable[] = {
    {8, "GPU stopped processing", Effect::Crash, Act::Restart},
    {13, "Graphics engine exception", Effect::Crash, Act::Restart},
    {31, "GPU memory page fault", Effect::Crash, Act::Restart},
    {32, "Invalid or corrupted push buffer stream", Effect::Crash, Act::Restart},
    {43, "GPU stopped processing (software-induced; the GPU stays healthy)", Effect::Crash, Act::Restart},
    {45, "Preemptive cleanup after earlier errors", Effect::None, Act::None},
    {46, "GPU stopped processing (timeout)", Effect::Crash, Act::ResetGpu},
    {48, "Double-bit ECC error", Effect::Crash, Act::ResetGpu, "xid48_hbm_dbe"},
    {61, "PMU breakpoint (unused on Ampere and later)", Effect::None, Act::None},
    {62, "Internal micro-controller halt", Effect::Crash, Act::ResetGpu},
    {63, "Row remapping event (applied at the next GPU reset)", Effect::None, Act::None, nullptr, 48},
    {64, "Row remapping failure", Effect::Crash, Act::ResetGpu, "xid64_remap_failure"},
    {68, "NVDEC0 exception", Effect::Crash, Act::Restart},
    {69, "Graphics engine class error", Effect::Crash, Act::Restart},
    {74, "NVLink error", Effect::Crash, Act::ResetGpu, "xid74_nvlink"},
    {79, "GPU has fallen off the bus", Effect::Crash, Act::Reboot, "xid79_fallen_off_bus"},
    {92, "High single-bit ECC error rate", Effect::None, Act::None, "xid92_sbe_storm"},
    {94, "Contained memory error", Effect::Crash, Act::Restart, "xid94_contained_ecc"},
    {95, "Uncontained memory error", Effect::Crash, Act::ResetGpu, "xid95_uncontained_ecc"},
    {109, "Context switch timeout", Effect::Crash, Act::ResetGpu},
    {119, "GSP RPC timeout", Effect::Crash, Act::ResetGpu, "xid119_gsp"},
    {120, "GSP error", Effect::Crash, Act::ResetGpu},
    {136, "Link training failed", Effect::Crash, Act::ResetGpu},
    {140, "Unrecovered ECC error (escaped row remapping)", Effect::Crash, Act::ResetGpu},
    {143, "GPU initialization error", Effect::Crash, Act::ResetGpu},
    // NVLink5 (B100/GB200): NVIDIA's workflow decides by the error status: its fatal statuses reset
    // the GPU, the others are ignored. The table keeps the fatal case; a log line carries no status.
    {144, "NVLink SAW error", Effect::Crash, Act::ResetGpu},
    {145, "NVLink RLW error", Effect::Crash, Act::ResetGpu},
    {146, "NVLink TLW error", Effect::Crash, Act::ResetGpu},
    {147, "NVLink TREX error", Effect::Crash, Act::ResetGpu},
    {148, "NVLink NVLPW_CTRL error", Effect::Crash, Act::ResetGpu},
    {149, "NVLink NETIR error", Effect::Crash, Act::ResetGpu},
    {150, "NVLink MSE error", Effect::Crash, Act::ResetGpu},
    {154, "GPU recovery action changed (a summary of another Xid's action)", Effect::None, Act::None},
    {158, "GPU fatal timeout", Effect::Crash, Act::ResetGpu},
};

}  // namespace

std::span<const XidInfo> xid_table() { return kTable; }

const XidInfo* xid_info(int xid) {
  const auto it = std::find_if(std::begin(kTable), std::end(kTable), [xid](const XidInfo& x) { return x.xid == xid; });
  return it == std::end(kTable) ? nullptr : &*it;
}

std::string xid_class_name(int xid) {
  if (const XidInfo* x = xid_info(xid); x && x->catalog_class) return x->catalog_class;
  return "xid_" + std::to_string(xid);
}

}  // namespace ctwin
