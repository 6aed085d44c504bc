#pragma once
//! Reading a JSON document field by field while collecting every problem with its JSON pointer.
//! Getters record a problem and return nullopt, so validation goes on and reports everything at once.

#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/scenario.hpp"
#include "models/scenario_problem.hpp"
#include "core/units.hpp"

namespace ctwin::json_reader {

using nlohmann::json;

inline std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

//! Collects problems as `ScenarioProblem`s; getters return nullopt (or a default) after recording one.
class Reader {
 public:
  std::vector<ScenarioProblem> problems;

  void problem(const std::string& pointer, std::string reason) { problems.push_back({pointer, std::move(reason)}); }

  static std::string at(const std::string& pointer, const std::string& key) {
    return pointer + "/" + escape_pointer_token(key);
  }

  //! Unknown fields are errors: a typo must not silently fall back to a default.
  void allow_only(const json& object, const std::string& pointer, std::initializer_list<const char*> keys) {
    std::set<std::string> allowed(keys.begin(), keys.end());
    for (const auto& [key, value] : object.items()) {
      if (allowed.count(key)) continue;
      std::string list;
      for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
      problem(at(pointer, key), "unknown field (allowed here: " + list + ")");
    }
  }

  const json* object(const json& parent, const std::string& pointer, const char* key, bool required) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) problem(at(pointer, key), "missing required object");
      return nullptr;
    }
    if (!it->is_object()) {
      problem(at(pointer, key), std::string("expected an object, got ") + it->type_name());
      return nullptr;
    }
    return &*it;
  }

  std::optional<std::string> string(const json& parent, const std::string& pointer, const char* key, bool required) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) problem(at(pointer, key), "missing required string");
      return std::nullopt;
    }
    if (!it->is_string()) {
      problem(at(pointer, key), std::string("expected a string, got ") + it->type_name());
      return std::nullopt;
    }
    return it->get<std::string>();
  }

  std::optional<double> number(const json& parent, const std::string& pointer, const char* key, bool required,
                               double min_exclusive_or_nan = NAN) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) problem(at(pointer, key), "missing required number");
      return std::nullopt;
    }
    if (!it->is_number()) {
      problem(at(pointer, key), std::string("expected a number, got ") + it->type_name());
      return std::nullopt;
    }
    double value = it->get<double>();
    if (!std::isfinite(value)) {
      problem(at(pointer, key), "must be finite");
      return std::nullopt;
    }
    if (!std::isnan(min_exclusive_or_nan) && !(value > min_exclusive_or_nan)) {
      problem(at(pointer, key), "must be greater than " + fmt_number(min_exclusive_or_nan) + ", got " + it->dump());
      return std::nullopt;
    }
    return value;
  }

  std::optional<bool> boolean(const json& parent, const std::string& pointer, const char* key) {
    auto it = parent.find(key);
    if (it == parent.end()) return std::nullopt;
    if (!it->is_boolean()) {
      problem(at(pointer, key), std::string("expected true or false, got ") + it->type_name());
      return std::nullopt;
    }
    return it->get<bool>();
  }

  std::optional<double> probability(const json& parent, const std::string& pointer, const char* key) {
    auto value = number(parent, pointer, key, false);
    if (value && (*value < 0 || *value > 1)) {
      problem(at(pointer, key), "must be a probability between 0 and 1");
      return std::nullopt;
    }
    return value;
  }

  std::optional<std::int64_t> integer(const json& parent, const std::string& pointer, const char* key, bool required,
                                      std::int64_t min, std::int64_t max = INT64_MAX) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) problem(at(pointer, key), "missing required integer");
      return std::nullopt;
    }
    if (!it->is_number_integer()) {
      problem(at(pointer, key), std::string("expected an integer, got ") + (it->is_number() ? it->dump() : it->type_name()));
      return std::nullopt;
    }
    std::int64_t value = it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX ? INT64_MAX
                                                                                           : it->get<std::int64_t>();
    if (value < min || value > max) {
      problem(at(pointer, key), "must be between " + std::to_string(min) + " and " + std::to_string(max) + ", got " +
                                    std::to_string(value));
      return std::nullopt;
    }
    return value;
  }

  template <class Parse>
  auto with_unit(const json& parent, const std::string& pointer, const char* key, bool required, Parse parse,
                 const char* example) -> decltype(parse(std::string_view{}, std::declval<std::string&>())) {
    auto it = parent.find(key);
    if (it == parent.end()) {
      if (required) problem(at(pointer, key), std::string("missing required field (e.g. \"") + example + "\")");
      return std::nullopt;
    }
    if (!it->is_string()) {
      problem(at(pointer, key), std::string("expected a string with a unit (e.g. \"") + example + "\"), got " +
                                    (it->is_number() ? it->dump() : it->type_name()));
      return std::nullopt;
    }
    std::string why;
    auto value = parse(it->get<std::string>(), why);
    if (!value) problem(at(pointer, key), why);
    return value;
  }

  std::optional<Micros> duration(const json& parent, const std::string& pointer, const char* key, bool required,
                                 bool positive = false) {
    auto seconds = with_unit(parent, pointer, key, required, parse_duration_s, "10min");
    if (!seconds) return std::nullopt;
    Micros us = seconds_to_micros(*seconds);
    if (*seconds > kLongestSeconds) {
      problem(at(pointer, key), "is longer than any simulation can be");
      return std::nullopt;
    }
    if (positive && us <= 0) {
      problem(at(pointer, key), "must be longer than zero");
      return std::nullopt;
    }
    return us;
  }

  std::optional<double> positive_unit(const json& parent, const std::string& pointer, const char* key, bool required,
                                      std::optional<double> (*parse)(std::string_view, std::string&),
                                      const char* example) {
    auto value = with_unit(parent, pointer, key, required, parse, example);
    if (value && *value <= 0) {
      problem(at(pointer, key), "must be greater than zero");
      return std::nullopt;
    }
    return value;
  }

  static std::string fmt_number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", v);
    return buffer;
  }
};

template <class Enum>
inline std::optional<Enum> choose(Reader& r, const json& parent, const std::string& pointer, const char* key, bool required,
                           std::initializer_list<std::pair<const char*, Enum>> options) {
  auto text = r.string(parent, pointer, key, required);
  if (!text) return std::nullopt;
  std::string list;
  for (const auto& [name, value] : options) {
    if (*text == name) return value;
    list += (list.empty() ? "" : ", ") + std::string(name);
  }
  r.problem(Reader::at(pointer, key), "unknown value \"" + *text + "\" (one of: " + list + ")");
  return std::nullopt;
}

//! A required action among `allowed` (models/remediation.hpp), by its name.
inline std::optional<Act> choose_act(Reader& r, const json& parent, const std::string& pointer, const char* key,
                                     std::span<const Act> allowed) {
  auto text = r.string(parent, pointer, key, true);
  if (!text) return std::nullopt;
  if (auto act = act_named(*text, allowed)) return act;
  std::string list;
  for (Act a : allowed) list += (list.empty() ? "" : ", ") + std::string(to_string(a));
  r.problem(Reader::at(pointer, key), "unknown value \"" + *text + "\" (one of: " + list + ")");
  return std::nullopt;
}

//! The `faults` section (faults_loader.cpp).
void read_faults(Reader& r, const json& root, Scenario& s);
//! The fault episodes one trial should expect, over the horizon or at least the work: a problem
//! past kMostFaultsPerTrial, pointing at the largest class's rate (faults_loader.cpp).
void check_fault_volume(Reader& r, const Scenario& s);

//! The optional `workload` section (workload_loader.cpp): the step time comes from it.
void read_workload(Reader& r, const json& root, Scenario& s);

//! The `policies` section (policies_loader.cpp); reads after the job, whose size it checks against.
void read_policies(Reader& r, const json& root, Scenario& s);

}  // namespace ctwin::json_reader
