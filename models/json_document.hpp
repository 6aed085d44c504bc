#pragma once
//! JSON documents read as bad input, never as a crash: nesting is bounded (100,000 levels
//! overflowed the stack), and a value that cannot be held (`1e400`) is an error naming its field.

#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario_problem.hpp"

namespace ctwin {

//! Deeper than any scenario, trace or report needs.
inline constexpr int kMaxJsonNesting = 64;

namespace detail {
//! Where the parser is: the JSON pointer of the value it reads (for the error message).
class JsonPosition {
 public:
  //! Thrown by `follow` past kMaxJsonNesting: parsing stops there.
  struct TooDeep {};
  //! Follows one parser event (and keeps every value).
  bool follow(nlohmann::json::parse_event_t event, const nlohmann::json& parsed);
  std::string pointer() const;

 private:
  struct Frame {
    bool array = false;
    long completed = 0;  //!< an array's elements read so far: the next one's index
    std::string key;     //!< an object's member being read
  };
  void value_read();
  std::vector<Frame> frames_;
};
}  // namespace detail

//! Parses `text` (from `display_name`) into Json (nlohmann::json or ordered_json); ScenarioInvalid
//! (exit 2) with the pointer and the reason when it cannot.
template <class Json = nlohmann::json>
Json parse_json_document(const std::string& text, const std::string& display_name) {
  detail::JsonPosition at;
  Json root;
  try {
    root = Json::parse(text, [&](int, nlohmann::json::parse_event_t event, Json& parsed) {
      if constexpr (std::is_same_v<Json, nlohmann::json>) return at.follow(event, parsed);
      else return at.follow(event, event == nlohmann::json::parse_event_t::key ? nlohmann::json(parsed) : nlohmann::json());
    });
  } catch (const detail::JsonPosition::TooDeep&) {
    throw ScenarioInvalid(display_name, {{at.pointer(), "nested deeper than " + std::to_string(kMaxJsonNesting) + " levels"}});
  } catch (const nlohmann::json::parse_error& e) {
    throw ScenarioInvalid(display_name, {{at.pointer(), std::string("not valid JSON: ") + e.what()}});
  } catch (const nlohmann::json::exception& e) {
    throw ScenarioInvalid(display_name, {{at.pointer(), std::string("a value that cannot be read: ") + e.what()}});
  }
  return root;
}

}  // namespace ctwin
