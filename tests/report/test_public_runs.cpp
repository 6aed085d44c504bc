// The scenarios of public runs: each loads and runs, cites what it was built from and what it is
// compared with as two sets that do not overlap, and prints the comparison.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "models/scenario_loader.hpp"
#include "report/run_report.hpp"
#include "support/fixtures.hpp"
#include "support/runs.hpp"

using namespace ctwin;

TEST_CASE("public-run scenarios compare with figures they were not built from", "[public]") {
  for (const char* name : {"bloom176b", "opt175b", "byterobust_9600"}) {
    INFO(name);
    const std::string path = test::repo_file(std::string("scenarios/") + name + ".json");
    const auto doc = test::read_json(path);
    const auto& built = doc["sources"]["built_from"];
    const auto& compared = doc["sources"]["compared_with"];
    REQUIRE(built.size() > 0);
    REQUIRE(compared.size() > 0);
    // Every compared figure cites a compared_with tag, never a built_from one.
    auto tag = [](const std::string& s) { return s.substr(0, s.find(']') + 1); };
    std::set<std::string> built_tags, compared_tags;
    for (const auto& b : built) built_tags.insert(tag(b.get<std::string>()));
    for (const auto& c : compared) compared_tags.insert(tag(c.get<std::string>()));
    for (const auto& t : compared_tags) CHECK_FALSE(built_tags.count(t));
    const Scenario scenario = load_scenario(path);
    REQUIRE_FALSE(scenario.compare.empty());
    for (const auto& c : scenario.compare) CHECK(compared_tags.count(tag(c.source)));

    RunOptions options = test::run_options(40, 1);
    const RunResult result = run_trials(scenario, options);
    const RunReportInput report{scenario, options, result};
    const std::string text = summary_text(report);
    CHECK(text.find("compared with published figures") != std::string::npos);
    const auto json = nlohmann::json::parse(report_json(report));
    REQUIRE(json["comparison"].size() == scenario.compare.size());
    for (const auto& c : json["comparison"]) {
      CHECK((c["verdict"] == "consistent" || c["verdict"] == "outside"));
      CHECK(c["simulated"]["ci95_low"].get<double>() <= c["simulated"]["ci95_high"].get<double>());
    }
    for (const auto& t : result.trials) REQUIRE(t.ledger.total() == t.wall_us);
  }
}
