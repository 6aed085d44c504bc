// The unit parser ("10min", "2.5GiB", "400Gbps", "989TFLOP/s", "0.17/gpu-year") on arbitrary text:
// a value or a reason, never a crash; what it returns is finite and converts to microseconds.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/units.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string why;
  for (auto parse : {ctwin::parse_duration_s, ctwin::parse_bytes, ctwin::parse_bandwidth_bytes_per_s, ctwin::parse_flops}) {
    why.clear();
    if (const auto v = parse(text, why)) {
      if (!std::isfinite(*v)) std::abort();
      (void)ctwin::seconds_to_micros(*v);
    } else if (why.empty()) {
      std::abort();  // a refusal always says why
    }
  }
  why.clear();
  if (const auto rate = ctwin::parse_rate(text, why)) {
    if (!std::isfinite(rate->per_component_second)) std::abort();
  } else if (why.empty()) {
    std::abort();
  }
  return 0;
}
