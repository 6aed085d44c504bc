#include "live/job/cadence_json.hpp"

#include <fstream>
#include <sstream>

namespace ctwin::live {

nlohmann::json cadence_to_json(const CheckpointCadence& cadence) {
  nlohmann::json changes = nlohmann::json::array();
  for (const auto& c : cadence.changes) changes.push_back({{"from", c.from}, {"every", c.every}});
  return {{"revision", cadence.revision}, {"changes", changes}};
}

std::optional<CheckpointCadence> read_cadence_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str(), nullptr, false);
  try {
    CheckpointCadence c;
    c.revision = j.at("revision").get<std::int64_t>();
    for (const auto& change : j.at("changes")) c.changes.push_back({change.at("from").get<std::int64_t>(), change.at("every").get<std::int64_t>()});
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace ctwin::live
