#include "support/fixtures.hpp"

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "models/scenario_loader.hpp"

namespace ctwin::test {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

Scenario scenario_from(const nlohmann::json& doc, const std::string& name) { return parse_scenario(doc.dump(), name); }

std::vector<ScenarioProblem> load_problems(const nlohmann::json& doc) {
  try {
    scenario_from(doc, "bad.json");
  } catch (const ScenarioInvalid& e) {
    return e.problems();
  }
  return {};
}

bool says_at(const std::vector<ScenarioProblem>& problems, const std::string& pointer, const std::string& part) {
  for (const auto& p : problems)
    if (p.pointer == pointer && p.reason.find(part) != std::string::npos) return true;
  return false;
}

nlohmann::json renewal_scenario(double mtbf_s, double interval_s, double save_s, double restart_s, double horizon_s) {
  auto seconds = [](double s) {
    std::ostringstream out;
    out.precision(17);
    out << s << "s";
    return out.str();
  };
  std::ostringstream rate;
  rate.precision(17);
  rate << 3600.0 / mtbf_s << "/node-hour";
  return {
      {"schema_version", 1},
      {"name", "renewal"},
      {"cluster", {{"nodes", 1}, {"gpus_per_node", 1}, {"gpu", {{"model", "any"}, {"peak_bf16", "1TFLOP/s"}}}}},
      {"job", {{"nodes", 1}, {"step_time", "1s"}, {"horizon", seconds(horizon_s)}}},
      {"faults",
       {{{"name", "crash"}, {"rate", rate.str()}, {"effect", "crash"}, {"detection", "0s"},
         {"recovery", {{"action", "restart"}, {"duration", "0s"}}}}}},
      {"checkpoint", {{"save_time", seconds(save_s)}, {"restore_time", "0s"}}},
      {"restart", {{"overhead", seconds(restart_s)}}},
      {"policies", {{"checkpoint", {{"type", "fixed"}, {"interval", seconds(interval_s)}}}}},
  };
}

std::pair<int, std::string> run_program(const std::string& program, const std::string& args) {
  // The unit tier is in-process (tests/CMakeLists.txt): a case that starts a program is tagged [process].
  const char* tier = std::getenv("CTWIN_TEST_TIER");
  if (tier && std::string(tier) == "unit")
    FAIL("a unit test started " + program + ": tag the case [process], which moves it to the e2e tier");
  const std::string command = program + " " + args + " 2>&1";
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = pipe ? pclose(pipe) : -1;
  return {WEXITSTATUS(status), out};
}

}  // namespace ctwin::test
