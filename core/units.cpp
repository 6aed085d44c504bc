#include "core/units.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

namespace ctwin {
namespace {

struct Suffix {
  std::string_view name;
  double factor;
};

//! Splits "2.5GiB" into 2.5 and "GiB"; spaces between number and unit are allowed.
bool split_number(std::string_view text, double& number, std::string_view& unit, std::string& why) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || !std::isfinite(number)) {
    why = "expected a number followed by a unit, got \"" + std::string(text) + "\"";
    return false;
  }
  unit = std::string_view(end, static_cast<size_t>(text.data() + text.size() - end));
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.remove_prefix(1);
  if (number < 0) {
    why = "must not be negative, got \"" + std::string(text) + "\"";
    return false;
  }
  return true;
}

template <size_t N>
std::optional<double> parse_with(std::string_view text, const std::array<Suffix, N>& suffixes, std::string_view kind,
                                 std::string_view examples, std::string& why) {
  double number = 0;
  std::string_view unit;
  if (!split_number(text, number, unit, why)) return std::nullopt;
  for (const auto& s : suffixes)
    if (unit == s.name) return number * s.factor;
  why = "unknown " + std::string(kind) + " unit \"" + std::string(unit) + "\" in \"" + std::string(text) +
        "\" (use " + std::string(examples) + ")";
  return std::nullopt;
}

constexpr double kKi = 1024.0, kMi = kKi * 1024, kGi = kMi * 1024, kTi = kGi * 1024, kPi = kTi * 1024;

constexpr std::array<Suffix, 13> kDurations{{{"us", 1e-6},
                                             {"ms", 1e-3},
                                             {"s", 1},
                                             {"sec", 1},
                                             {"min", 60},
                                             {"h", 3600},
                                             {"hour", 3600},
                                             {"hours", 3600},
                                             {"d", 86400},
                                             {"day", 86400},
                                             {"days", 86400},
                                             {"w", 7 * 86400},
                                             {"y", 365 * 86400}}};

constexpr std::array<Suffix, 12> kBytes{{{"B", 1},
                                         {"KB", 1e3},
                                         {"MB", 1e6},
                                         {"GB", 1e9},
                                         {"TB", 1e12},
                                         {"PB", 1e15},
                                         {"KiB", kKi},
                                         {"MiB", kMi},
                                         {"GiB", kGi},
                                         {"TiB", kTi},
                                         {"PiB", kPi},
                                         {"bytes", 1}}};

//! Bits per second ("Gbps") and bytes per second ("GB/s", "GiB/s").
constexpr std::array<Suffix, 15> kBandwidths{{{"bps", 1.0 / 8},
                                              {"Kbps", 1e3 / 8},
                                              {"Mbps", 1e6 / 8},
                                              {"Gbps", 1e9 / 8},
                                              {"Tbps", 1e12 / 8},
                                              {"B/s", 1},
                                              {"KB/s", 1e3},
                                              {"MB/s", 1e6},
                                              {"GB/s", 1e9},
                                              {"TB/s", 1e12},
                                              {"KiB/s", kKi},
                                              {"MiB/s", kMi},
                                              {"GiB/s", kGi},
                                              {"TiB/s", kTi},
                                              {"PB/s", 1e15}}};

//! A rate's or an exposure's component, by name.
constexpr std::array<std::pair<std::string_view, Component>, 6> kComponents{{
    {"gpu", Component::Gpu}, {"node", Component::Node}, {"leaf", Component::Leaf}, {"spine", Component::Spine},
    {"cable", Component::Cable}, {"nvswitch", Component::NvSwitch}}};

constexpr std::array<Suffix, 5> kFlops{
    {{"FLOP/s", 1}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}, {"EFLOP/s", 1e18}}};

}  // namespace

std::optional<double> parse_duration_s(std::string_view text, std::string& why) {
  return parse_with(text, kDurations, "duration", "us, ms, s, min, h, d, w or y: \"10min\"", why);
}

std::optional<double> parse_bytes(std::string_view text, std::string& why) {
  return parse_with(text, kBytes, "size", "B, KB, MB, GB, TB (decimal) or KiB, MiB, GiB, TiB (binary): \"2.5GiB\"",
                    why);
}

std::optional<double> parse_bandwidth_bytes_per_s(std::string_view text, std::string& why) {
  return parse_with(text, kBandwidths, "bandwidth", "bits as \"400Gbps\" or bytes as \"50GB/s\"", why);
}

std::optional<double> parse_flops(std::string_view text, std::string& why) {
  return parse_with(text, kFlops, "compute rate", "\"989TFLOP/s\"", why);
}

std::optional<Rate> parse_rate(std::string_view text, std::string& why) {
  double number = 0;
  std::string_view unit;
  if (!split_number(text, number, unit, why)) return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, double>, 4> kPeriods{
      {{"hour", 3600.0}, {"day", 86400.0}, {"week", 7 * 86400.0}, {"year", kSecondsPerYear}}};
  if (unit.size() > 1 && unit.front() == '/') {
    const auto dash = unit.find('-');
    const std::string_view component = unit.substr(1, dash == std::string_view::npos ? 0 : dash - 1);
    const std::string_view period = dash == std::string_view::npos ? std::string_view{} : unit.substr(dash + 1);
    for (const auto& [c_name, c] : kComponents)
      for (const auto& [p_name, seconds] : kPeriods)
        if (component == c_name && period == p_name) return Rate{number / seconds, c};
  }
  why = "unknown rate unit \"" + std::string(unit) + "\" in \"" + std::string(text) +
        "\" (use failures per component and period: \"0.17/gpu-year\", \"0.002/node-day\"; components: gpu, node, "
        "leaf, spine, cable, nvswitch; periods: hour, day, week, year)";
  return std::nullopt;
}

std::optional<Exposure> parse_exposure(std::string_view text, std::string& why) {
  double number = 0;
  std::string_view unit;
  if (!split_number(text, number, unit, why)) return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, double>, 8> kPeriods{
      {{"hours", 3600.0}, {"days", 86400.0}, {"weeks", 7 * 86400.0}, {"years", kSecondsPerYear},
       {"hour", 3600.0}, {"day", 86400.0}, {"week", 7 * 86400.0}, {"year", kSecondsPerYear}}};
  const auto dash = unit.find('-');
  const std::string_view component = unit.substr(0, dash == std::string_view::npos ? 0 : dash);
  const std::string_view period = dash == std::string_view::npos ? std::string_view{} : unit.substr(dash + 1);
  if (number >= 0)
    for (const auto& [c_name, c] : kComponents)
      for (const auto& [p_name, seconds] : kPeriods)
        if (component == c_name && period == p_name) return Exposure{number * seconds, c};
  why = number < 0 ? "exposure must be at least 0, got \"" + std::string(text) + "\""
                   : "unknown exposure unit \"" + std::string(unit) + "\" in \"" + std::string(text) +
                         "\" (use component-time observed: \"884736 gpu-days\", \"110592 node-days\"; periods: hours, days, weeks, years)";
  return std::nullopt;
}

const char* to_string(Component c) {
  switch (c) {
    case Component::Node: return "node";
    case Component::Gpu: return "gpu";
    case Component::Leaf: return "leaf";
    case Component::Spine: return "spine";
    case Component::Cable: return "cable";
    case Component::NvSwitch: return "nvswitch";
  }
  return "?";
}

std::string format_duration(double seconds) {
  char buffer[64];
  if (seconds > 0 && seconds < 1e-3) std::snprintf(buffer, sizeof buffer, "%.3g us", seconds * 1e6);  // not "0.0 s"
  else if (seconds > 0 && seconds < 0.05) std::snprintf(buffer, sizeof buffer, "%.3g ms", seconds * 1e3);
  else if (seconds < 120) std::snprintf(buffer, sizeof buffer, "%.1f s", seconds);
  else if (seconds < 7200) std::snprintf(buffer, sizeof buffer, "%.1f min", seconds / 60);
  else if (seconds < 3 * 86400) std::snprintf(buffer, sizeof buffer, "%.2f h", seconds / 3600);
  else std::snprintf(buffer, sizeof buffer, "%.2f d", seconds / 86400);
  return buffer;
}

std::string exact_seconds(Micros us) {
  char text[32];
  std::snprintf(text, sizeof text, "%lld.%06lld", static_cast<long long>(us / kMicrosPerSecond),
                static_cast<long long>(us % kMicrosPerSecond));
  return text;
}

}  // namespace ctwin
