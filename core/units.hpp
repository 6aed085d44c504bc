#pragma once
//! Human units in scenario files: "10min", "2.5GiB", "400Gbps", "50GB/s", "0.17/gpu-year".
//! Everything is stored in SI base units (seconds, bytes, bytes per second) or integer microseconds.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ctwin {

//! Simulated time in integer microseconds: the ledger adds up exactly.
using Micros = std::int64_t;
inline constexpr Micros kMicrosPerSecond = 1'000'000;
inline constexpr Micros kNever = INT64_MAX;

//! The longest span any input may name (about 31,700 years): loaders refuse longer ones, so that
//! every conversion to Micros below stays in range.
inline constexpr double kLongestSeconds = 1e12;

//! Rounds a count of microseconds held in a double, and seconds (below), to the nearest
//! microsecond. Out of range (beyond about 292,000 years) or NaN it
//! saturates at +-kNever: a float-to-integer conversion out of range is undefined behaviour, and
//! once gave "saves in 0 s" for a checkpoint of 1e20 bytes.
inline Micros round_micros(double us) {
  if (!(us < 9.2e18)) return us < 0 ? -kNever : kNever;  // NaN too: never
  if (!(us > -9.2e18)) return -kNever;
  return static_cast<Micros>(us + (us >= 0 ? 0.5 : -0.5));
}
inline Micros seconds_to_micros(double seconds) { return round_micros(seconds * 1e6); }
inline double micros_to_seconds(Micros us) { return static_cast<double>(us) / 1e6; }
inline double micros_to_hours(Micros us) { return static_cast<double>(us) / 3.6e9; }
inline double micros_to_days(Micros us) { return static_cast<double>(us) / 8.64e10; }

//! What a rate is counted against: "/node-day", "/gpu-year", or a network part: "/leaf-year"
//! (a ToR or rail switch), "/spine-year", "/cable-year" (one NIC's cable to its leaf),
//! "/nvswitch-year" (an NVLink switch tray of a multi-node NVLink domain, GB200 NVL72-style).
enum class Component { Node, Gpu, Leaf, Spine, Cable, NvSwitch };
inline bool is_network(Component c) {
  return c == Component::Leaf || c == Component::Spine || c == Component::Cable || c == Component::NvSwitch;
}
const char* to_string(Component c);

//! A year as rates and exposures read it ("0.17/gpu-year"): 365 days. Everything that writes a
//! rate per year uses this, so a rate written is the rate read back.
inline constexpr double kSecondsPerYear = 365 * 86400.0;

struct Rate {
  double per_component_second = 0;  //!< failures per second per component
  Component component = Component::Node;
};

//! Each parser returns nullopt and fills `why` on failure; `why` reads as the tail of an error line.
std::optional<double> parse_duration_s(std::string_view text, std::string& why);
std::optional<double> parse_bytes(std::string_view text, std::string& why);
std::optional<double> parse_bandwidth_bytes_per_s(std::string_view text, std::string& why);
std::optional<double> parse_flops(std::string_view text, std::string& why);
std::optional<Rate> parse_rate(std::string_view text, std::string& why);
//! Exposure, component-time observed: "884736 gpu-days", "110592node-days" (hours, days, weeks,
//! years; 365-day years, as a rate's). Returns component-seconds; `component` says of what.
struct Exposure {
  double component_seconds = 0;
  Component component = Component::Node;
};
std::optional<Exposure> parse_exposure(std::string_view text, std::string& why);

//! "1h 30min" style, for summaries.
std::string format_duration(double seconds);

//! Seconds with exactly six decimals ("12.500000"): the microseconds survive the round trip
//! (event logs and their ledger rows).
std::string exact_seconds(Micros us);

}  // namespace ctwin
