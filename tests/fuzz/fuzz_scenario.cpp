// The scenario loader on arbitrary bytes: a scenario (or a policies file) loads, or is refused as
// bad input (ScenarioInvalid: exit 2). Any other exception, a crash or undefined behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    ctwin::parse_policies_or_scenario(text, "fuzz.json");
  } catch (const ctwin::ScenarioInvalid&) {
  }
  return 0;
}
