// One Xid table serves the catalogue, calibration and live mode: every catalogue class with an Xid
// is the one the table names for it, with the same effect, and the table follows NVIDIA's catalogue.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "models/fault_catalog.hpp"
#include "models/scenario_loader.hpp"
#include "models/xid_table.hpp"
#include "core/text_records.hpp"

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

// Every row of NVIDIA's catalogue as copied in scenarios/sources is in the table, with NVIDIA's
// immediate action in ctwin's words (a workflow's action is the one the table's comment names).
TEST_CASE("the Xid table follows NVIDIA's catalogue row by row", "[catalog][xid]") {
  std::ifstream csv(std::string(CTWIN_TEST_DIR) + "/../scenarios/sources/nvidia_xid_actions.csv");
  REQUIRE(csv);
  std::string line;
  std::getline(csv, line);  // header
  int rows = 0;
  while (std::getline(csv, line)) {
    const std::vector<std::string> cells = split_csv(line);
    REQUIRE(cells.size() >= 4);
    const int code = std::stoi(cells[0]);
    INFO("Xid " << code << ": " << cells[3]);
    const XidInfo* x = xid_info(code);
    REQUIRE(x);
    const std::string& immediate = cells[3];
    if (immediate == "RESTART_APP") CHECK(x->action == Act::Restart);
    else if (immediate == "RESET_GPU") CHECK(x->action == Act::ResetGpu);
    else if (immediate == "RESTART_BM") CHECK(x->action == Act::Reboot);
    else if (immediate == "IGNORE") CHECK((x->action == Act::None || code == 43));  // 43: the app stops, the GPU is fine
    else if (immediate.rfind("WORKFLOW_", 0) == 0) CHECK((x->action == Act::ResetGpu || code == 45));
    else CHECK(x->effect == Effect::None);  // CONTACT_SUPPORT on an unused code, XID_154's summary
    ++rows;
  }
  CHECK(rows == static_cast<int>(xid_table().size()));
  for (int code : {13, 31, 43, 45, 61, 62, 63, 68, 69, 109, 120, 140, 143, 144, 145, 146, 147, 148, 149, 150, 154})
    CHECK(xid_info(code));
}
