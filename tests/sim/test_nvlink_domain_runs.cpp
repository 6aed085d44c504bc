// A multi-node NVLink domain (GB200 NVL72-style: 18 nodes of 4 GPUs, 9 NVLink switch trays): a
// tray that fails takes its whole domain out of the job (a crash), or leaves it on less NVLink
// bandwidth (slow). The blast radius is the domain, whatever rack or leaf the nodes sit behind.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "models/network_domains.hpp"
#include "sim/monte_carlo.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

namespace {

//! 72 nodes of 4 GPUs (4 domains of 18), 64 in the job and 8 spares, and an NVLink tray class.
nlohmann::json nvl72(const std::string& effect) {
  auto doc = test::read_json(test::fixture("fabric.json"));
  doc["cluster"]["nodes"] = 72;
  doc["cluster"]["gpus_per_node"] = 4;
  doc["cluster"]["spare_nodes"] = 8;
  doc["cluster"]["topology"]["nodes_per_rack"] = 18;
  doc["cluster"]["topology"]["nvlink_domain"] = {{"nodes", 18}, {"switches", 9}, {"source", "GB200 NVL72 [A]"}};
  doc["job"]["nodes"] = 64;
  nlohmann::json tray = {{"name", "nvlink_tray"}, {"rate", "2/nvswitch-year"}, {"effect", effect}, {"detection", "30s"},
                         {"recovery", {{"action", "replace"}, {"duration", "4h"}}}};
  if (effect == "slow") tray["speed_factor"] = 0.89;
  doc["faults"] = nlohmann::json::array({tray});
  return doc;
}

}  // namespace

TEST_CASE("an NVLink switch tray's blast radius is its whole domain", "[network][nvlink]") {
  const Scenario s = test::scenario_from(nvl72("crash"));
  CHECK(component_count(s, s.faults[0]) == 4 * 9);
  const NetworkDomains domains = build_network_domains(s);
  const auto& trays = domains.per_class[0];
  REQUIRE(trays.size() == 36);
  // Tray 9 is domain 1's first: nodes 18..35, all of them out.
  std::vector<std::int32_t> expected;
  for (int n = 18; n < 36; ++n) expected.push_back(n);
  CHECK(trays[9].nodes_out == expected);
  CHECK(trays[17].nodes_out == expected);
  // The last domain holds the last job nodes and the spares the scenario tracks (54..71).
  CHECK(trays[35].nodes_out.front() == 54);
  CHECK(trays[35].nodes_out.back() == 71);
  // Slow: the same nodes, on less bandwidth.
  const Scenario slow = test::scenario_from(nvl72("slow"));
  CHECK(build_network_domains(slow).per_class[0][9].nodes_degraded == expected);
  // Without a domain, a tray is refused with the pointer.
  auto doc = nvl72("crash");
  doc["cluster"]["topology"].erase("nvlink_domain");
  CHECK_THROWS_WITH(test::scenario_from(doc, "t.json"), Catch::Contains("t.json: /faults/0/rate: an NVLink switch tray"));
}

TEST_CASE("a failed NVLink tray takes its domain's nodes out of the job, on both engines", "[network][nvlink][simgrid]") {
  const Scenario s = test::scenario_from(nvl72("crash"));
  RunOptions options = test::run_options(10, 3);
  options.record_events = true;
  const RunResult a = run_trials(s, options);
  options.engine = EngineKind::Simgrid;
  test::require_same_trials(a, run_trials(s, options));
  std::int64_t trays = 0;
  for (const auto& t : a.trials) {
    REQUIRE(t.ledger.total() == t.wall_us);
    trays += t.fault_counts[0];
  }
  CHECK(trays > 0);
  // In trial 0's log, each tray fault takes its domain's 18 nodes down at once (job nodes leave,
  // spares behind it are held), whichever domain it is.
  const auto& events = a.recorded_events;
  int seen = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].kind != EventKind::Fault || events[i].component < 0) continue;
    std::set<int> down;
    for (std::size_t j = 0; j < events.size(); ++j)
      if (events[j].time == events[i].time && events[j].kind == EventKind::NodeDown) down.insert(events[j].node);
    CHECK(down.size() == 18);
    CHECK(*down.begin() == events[i].component / 9 * 18);
    ++seen;
  }
  CHECK(seen > 0);
}
