#include "live/supervisor/fault_classes.hpp"

#include "models/fault_catalog.hpp"

namespace ctwin::live {

namespace {

Act catalogue_act(const nlohmann::ordered_json& entry) {
  const std::string action = entry.contains("recovery") ? entry["recovery"].value("action", "restart") : "restart";
  return act_named(action, kFaultActions).value_or(Act::Restart);
}

}  // namespace

LiveFaultClass classify_xid(const Scenario& scenario, int xid) {
  for (const auto& fc : scenario.faults)
    if (fc.xid && *fc.xid == xid) return {fc.name, fc.action};
  for (const auto& entry : fault_catalog())
    if (entry.contains("xid") && entry["xid"].get<int>() == xid) return {entry["name"].get<std::string>(), catalogue_act(entry)};
  return {"xid" + std::to_string(xid), Act::Restart};
}

LiveFaultClass classify_named(const Scenario& scenario, const std::string& name) {
  for (const auto& fc : scenario.faults)
    if (fc.name == name) return {fc.name, fc.action};
  if (const auto* entry = catalog_entry(name)) return {name, catalogue_act(*entry)};
  return {name, Act::Restart};
}

}  // namespace ctwin::live
