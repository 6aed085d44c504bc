#pragma once
//! The built-in fault catalog: one entry per fault class seen in real GPU fleets, each with its
//! effect, detection, remediation and, where a public figure exists, its rate, all citing their
//! sources. A scenario uses an entry with `{"use": "xid79_fallen_off_bus"}` and may override any
//! field (JSON merge patch). An entry without a public rate needs the scenario to give one.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/remediation.hpp"
#include "models/scenario.hpp"

namespace ctwin {

//! An entry as a typed class: what the live side needs to name a stop (an entry that states no
//! effect is a crash, one that states no action a restart).
struct CatalogClass {
  std::string name;
  Effect effect = Effect::Crash;
  Act action = Act::Restart;
};

//! Entries in catalog order, each a partial fault class (with "name", "source", "notes").
const nlohmann::ordered_json& fault_catalog();
//! Null when there is no such entry.
const nlohmann::ordered_json* catalog_entry(const std::string& name);
std::vector<std::string> catalog_names();
//! The entry `name` as a typed class, read once from the catalog; null when there is no such entry.
const CatalogClass* catalog_class(const std::string& name);

}  // namespace ctwin
