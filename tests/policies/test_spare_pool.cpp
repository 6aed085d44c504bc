// The operator's answer to a dry spare pool (policies/spare_pool.hpp) on its own: when a top-up is
// ordered and how many nodes, and when repairs are expedited.
#include <catch2/catch.hpp>

#include <set>

#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"
#include "policies/spare_pool.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;

namespace {

control::ClusterView pool_view(int spares, int added = 0, int arriving = 0) {
  control::ClusterView v;
  v.job_nodes = 16;
  v.spares_available = spares;
  v.spares_added = added;
  v.spares_arriving = arriving;
  return v;
}

std::vector<control::Action> decide(const SparePoolSpec& spec, const control::ClusterView& v) {
  std::vector<control::Action> out;
  spare_pool_actions(spec, v, out);
  return out;
}

}  // namespace

TEST_CASE("spare pool: a top-up is ordered when fewer spares than the threshold are left, one at a time, up to its cap",
          "[policies][spares]") {
  SparePoolSpec spec;
  spec.top_up_nodes = 8;
  spec.top_up_delay_us = 12 * 3600 * kMicrosPerSecond;
  spec.top_up_below = 2;
  spec.top_up_at_most = 12;
  CHECK(decide(spec, pool_view(2)).empty());  // enough left
  const auto order = decide(spec, pool_view(1));
  REQUIRE(order.size() == 1);
  CHECK(order[0].act == Act::TopUp);
  CHECK(order[0].nodes == 8);
  CHECK(order[0].seconds == Approx(12 * 3600));
  CHECK(decide(spec, pool_view(0, 8, 8)).empty());      // the order is on its way: no second one
  const auto last = decide(spec, pool_view(0, 8, 0));   // it landed and was used: what the cap allows
  REQUIRE(last.size() == 1);
  CHECK(last[0].nodes == 4);
  CHECK(decide(spec, pool_view(0, 12, 0)).empty());     // the cap is reached
  spec.top_up_nodes = 0;
  CHECK(decide(spec, pool_view(0)).empty());            // no top-up at all
}

TEST_CASE("spare pool: repairs are expedited while the pool is dry, and only then", "[policies][spares]") {
  SparePoolSpec spec;
  spec.expedited_repair_us = 86400 * kMicrosPerSecond;
  const auto dry = decide(spec, pool_view(0));
  REQUIRE(dry.size() == 1);
  CHECK(dry[0].act == Act::ExpediteRepairs);
  CHECK(dry[0].seconds == Approx(86400));
  CHECK(decide(spec, pool_view(1)).empty());
  CHECK(decide(SparePoolSpec{}, pool_view(0)).empty());  // no policy: repairs take their time
}

TEST_CASE("spare pool: the scenario's policies.spare_pool reaches the controller, each field by its pointer", "[policies][spares]") {
  nlohmann::json doc = test::read_json(test::fixture("minimal.json"));
  doc["policies"]["spare_pool"] = {{"top_up", {{"nodes", 4}, {"delay", "6h"}, {"at_most", 8}}}, {"expedited_repair", "1d"}};
  const Scenario s = parse_scenario(doc.dump(), "spare_pool.json");
  CHECK(s.spare_pool.top_up_nodes == 4);
  CHECK(s.spare_pool.top_up_delay_us == 6 * 3600 * kMicrosPerSecond);
  CHECK(s.spare_pool.top_up_below == 1);
  CHECK(s.spare_pool.top_up_at_most == 8);
  REQUIRE(s.spare_pool.expedited_repair_us);
  const RecoveryController controller(s);
  control::Event changed;
  changed.signal = control::Signal::SparePool;
  std::vector<control::Action> out;
  controller.decide(changed, pool_view(0), out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].act == Act::TopUp);
  CHECK(out[1].act == Act::ExpediteRepairs);

  // One pointer prices a top-up: the delay and the cap have defaults (a day; one top-up).
  nlohmann::json one = test::read_json(test::fixture("minimal.json"));
  one["policies"]["spare_pool"]["top_up"]["nodes"] = 16;
  const Scenario single = parse_scenario(one.dump(), "one.json");
  CHECK(single.spare_pool.top_up_delay_us == 86400 * kMicrosPerSecond);
  CHECK(single.spare_pool.top_up_at_most == 16);

  // Bad input is named by its pointer.
  nlohmann::json bad = test::read_json(test::fixture("minimal.json"));
  bad["policies"]["spare_pool"] = {{"top_up", {{"nodes", -1}, {"delay", "soon"}}}, {"expedited_repair", "0s"}, {"extra", 1}};
  try {
    parse_scenario(bad.dump(), "bad.json");
    FAIL("accepted a bad spare_pool");
  } catch (const ScenarioInvalid& e) {
    std::set<std::string> pointers;
    for (const auto& p : e.problems()) pointers.insert(p.pointer);
    CHECK(pointers.count("/policies/spare_pool/top_up/nodes"));
    CHECK(pointers.count("/policies/spare_pool/top_up/delay"));
    CHECK(pointers.count("/policies/spare_pool/expedited_repair"));
    CHECK(pointers.count("/policies/spare_pool/extra"));
  }
}
