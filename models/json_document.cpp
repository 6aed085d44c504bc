#include "models/json_document.hpp"

#include "models/json_reader.hpp"

namespace ctwin::detail {

using Event = nlohmann::json::parse_event_t;

bool JsonPosition::follow(Event event, const nlohmann::json& parsed) {
  switch (event) {
    case Event::object_start:
    case Event::array_start:
      frames_.push_back({event == Event::array_start, 0, {}});
      if (static_cast<int>(frames_.size()) > kMaxJsonNesting) throw TooDeep{};
      break;
    case Event::key:
      frames_.back().key = parsed.is_string() ? parsed.get<std::string>() : std::string();
      break;
    case Event::object_end:
    case Event::array_end:
      frames_.pop_back();
      value_read();
      break;
    case Event::value:
      value_read();
      break;
  }
  return true;
}

void JsonPosition::value_read() {
  if (frames_.empty()) return;
  if (frames_.back().array) ++frames_.back().completed;
  else frames_.back().key.clear();  // between members: the error, if any, is the object's
}

std::string JsonPosition::pointer() const {
  std::string out;
  for (const auto& f : frames_) {
    // Appended piece by piece: "/" + std::string trips GCC 12's false -Wrestrict.
    if (f.array) out.append(1, '/').append(std::to_string(f.completed));
    else if (!f.key.empty()) out.append(1, '/').append(json_reader::escape_pointer_token(f.key));
  }
  return out;
}

}  // namespace ctwin::detail
