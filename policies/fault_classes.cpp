#include "policies/fault_classes.hpp"

#include "models/fault_catalog.hpp"
#include "models/xid_table.hpp"

namespace ctwin {

namespace {

LiveFaultClass from_catalogue(const CatalogClass& c) { return {c.name, c.effect, c.action}; }

LiveFaultClass from_scenario(const FaultClass& fc) { return {fc.name, fc.effect, fc.action}; }

}  // namespace

LiveFaultClass classify_xid(const Scenario& scenario, int xid) {
  for (const auto& fc : scenario.faults)  // the first class that holds it (its own xid, or its covers)
    if (!is_network(fc.rate.component) && fc.holds_xid(xid)) return from_scenario(fc);
  // The Xid table: the catalogue's class for it, else NVIDIA's documented effect and action.
  if (const XidInfo* x = xid_info(xid)) {
    if (x->catalog_class) return from_catalogue(*catalog_class(x->catalog_class));
    return {xid_class_name(xid), x->effect, x->action};
  }
  // Not in NVIDIA's catalogue either (a newer driver's, or a misread line): said so, and the GPU is
  // reset, as NVIDIA advises for errors it does not document (with a bug report to its support).
  return {xid_class_name(xid), Effect::Crash, Act::ResetGpu, false};
}

LiveFaultClass classify_stop(const Scenario& scenario, LiveStop stop) {
  struct Known {
    const char* name;
    Effect effect;
    Act act = Act::Restart;
  };
  const auto& named = scenario.live_stops;  // policies.live_stops, else the catalogue's names
  const Known known = stop == LiveStop::Crash  ? Known{named.crash ? named.crash->c_str() : "software_bug", Effect::Crash}
                      : stop == LiveStop::Hang ? Known{named.hang ? named.hang->c_str() : "nccl_hang", Effect::Hang}
                      : stop == LiveStop::NanLoss  ? Known{named.nan_loss ? named.nan_loss->c_str() : "sdc", Effect::Sdc}
                      : stop == LiveStop::NodeLost ? Known{named.node_lost ? named.node_lost->c_str() : "node_lost", Effect::Crash, Act::Replace}
                      : stop == LiveStop::RemapPending ? Known{"row_remap_pending", Effect::Crash, Act::ResetGpu}
                                                       : Known{"straggler", Effect::Slow, Act::Replace};
  for (const auto& fc : scenario.faults)
    if (fc.name == known.name) return from_scenario(fc);
  if (const auto* entry = catalog_class(known.name)) return from_catalogue(*entry);
  return {known.name, known.effect, known.act};
}

LiveFaultClass classify_named(const Scenario& scenario, const std::string& name) {
  for (const auto& fc : scenario.faults)
    if (fc.name == name) return from_scenario(fc);
  if (const auto* entry = catalog_class(name)) return from_catalogue(*entry);
  for (const LiveStop stop : {LiveStop::Crash, LiveStop::Hang, LiveStop::NanLoss, LiveStop::NodeLost, LiveStop::RemapPending, LiveStop::Straggler})
    if (const LiveFaultClass c = classify_stop(scenario, stop); c.name == name) return c;
  return {name, Effect::Crash, Act::Restart};
}

}  // namespace ctwin
