#include "models/scenario_problem.hpp"

namespace ctwin {

namespace {

std::string join_lines(const std::string& file, const std::vector<ScenarioProblem>& problems) {
  std::string out;
  for (const auto& p : problems) out += file + ": " + (p.pointer.empty() ? "/" : p.pointer) + ": " + p.reason + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace

ScenarioInvalid::ScenarioInvalid(std::string file, std::vector<ScenarioProblem> problems)
    : BadInput(join_lines(file, problems), true), file_(std::move(file)), problems_(std::move(problems)) {}

}  // namespace ctwin
