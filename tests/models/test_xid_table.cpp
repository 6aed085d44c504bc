// One Xid table serves the catalogue, calibration and live mode: every catalogue class with an Xid
// is the one the table names for it, with the same effect, and the table follows NVIDIA's catalogue.
#include <catch2/catch.hpp>

#include <set>

#include "models/fault_catalog.hpp"
#include "models/scenario_loader.hpp"
#include "models/xid_table.hpp"

using namespace ctwin;

TEST_CASE("the Xid table and the fault catalogue agree", "[catalog][xid]") {
  std::set<int> codes;
  for (const XidInfo& x : xid_table()) {
    INFO("Xid " << x.xid);
    CHECK(codes.insert(x.xid).second);  // each code once
    if (x.follows > 0) CHECK(xid_info(x.follows));
    if (!x.catalog_class) continue;
    const auto* entry = catalog_entry(x.catalog_class);
    REQUIRE(entry);
    CHECK(entry->at("xid") == x.xid);
    CHECK(effect_named(entry->at("effect").get<std::string>()) == x.effect);
  }
  // The catalogue's first class for each Xid is the table's (xid48_hbm_dbe, not sram_ecc).
  std::set<int> seen;
  for (const auto& entry : fault_catalog()) {
    if (!entry.contains("xid") || !seen.insert(entry["xid"].get<int>()).second) continue;
    const XidInfo* x = xid_info(entry["xid"]);
    REQUIRE(x);
    REQUIRE(x->catalog_class);
    CHECK(entry["name"] == x->catalog_class);
  }
  // NVIDIA's actions: a row remap is informational and follows a double-bit error, an uncontained
  // error needs a GPU reset, a GPU off the bus a reboot; a code NVIDIA does not list is not here.
  CHECK(xid_info(63)->effect == Effect::None);
  CHECK(xid_info(63)->follows == 48);
  CHECK(xid_info(95)->action == Act::ResetGpu);
  CHECK(xid_info(79)->action == Act::Reboot);
  CHECK(xid_info(999) == nullptr);
}
