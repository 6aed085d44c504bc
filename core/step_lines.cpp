#include "core/step_lines.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ctwin {

namespace {

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

//! Digits at `i` (at most 15: no run has 10^15 steps): their value, `i` moved past them.
std::optional<long long> whole_number(std::string_view s, std::size_t& i) {
  const std::size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  if (i == start || i - start > 15) return std::nullopt;
  return std::strtoll(std::string(s.substr(start, i - start)).c_str(), nullptr, 10);
}

//! A finite number at `i` ("1.5", "2e3"), `i` moved past it.
std::optional<double> number_at(std::string_view s, std::size_t& i) {
  std::size_t end = i;
  while (end < s.size() && s[end] != '\0' && std::strchr("0123456789.eE+-", s[end])) ++end;
  if (end == i || end - i > 32) return std::nullopt;
  const std::string text(s.substr(i, end - i));
  char* stop = nullptr;
  const double v = std::strtod(text.c_str(), &stop);
  if (stop != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  i = end;
  return v;
}

}  // namespace

std::optional<StepLine> parse_megatron_line(std::string_view line) {
  static constexpr std::string_view kElapsed = "elapsed time per iteration (ms):";
  const std::size_t it = line.find("iteration");
  if (it == std::string_view::npos) return std::nullopt;
  std::size_t i = it + 9;
  while (i < line.size() && is_space(line[i])) ++i;
  const auto step = whole_number(line, i);
  if (!step) return std::nullopt;
  while (i < line.size() && is_space(line[i])) ++i;
  if (i >= line.size() || line[i] != '/') return std::nullopt;
  StepLine out;
  out.step = *step;
  const std::size_t e = line.find(kElapsed, i);
  if (e == std::string_view::npos || line.find('|', i) > e) return out;
  out.elapsed_said = true;
  std::size_t v = e + kElapsed.size();
  while (v < line.size() && is_space(line[v])) ++v;
  if (const auto ms = number_at(line, v); ms && *ms > 0) out.seconds = *ms / 1000;
  return out;
}

std::optional<StepLine> parse_progress_line(std::string_view line) {
  // "N/M [" then, inside the brackets, a rate: "X it/s" or "X s/it".
  for (std::size_t open = line.find(" ["); open != std::string_view::npos; open = line.find(" [", open + 1)) {
    std::size_t j = open;  // back over "M", "/", "N"
    while (j > 0 && is_digit(line[j - 1])) --j;
    if (j == open || j == 0 || line[j - 1] != '/') continue;
    std::size_t n_end = j - 1, n_start = n_end;
    while (n_start > 0 && is_digit(line[n_start - 1])) --n_start;
    std::size_t at = n_start;
    const auto step = whole_number(line, at);
    if (!step || at != n_end) continue;
    const std::size_t close = line.find(']', open);
    if (close == std::string_view::npos) continue;
    const std::string_view inside = line.substr(open + 2, close - open - 2);
    StepLine out;
    out.step = *step;
    for (const auto& [unit, per_step] : {std::pair{std::string_view("it/s"), false}, std::pair{std::string_view("s/it"), true}}) {
      const std::size_t u = inside.find(unit);
      if (u == std::string_view::npos) continue;
      std::size_t start = u;
      while (start > 0 && (is_digit(inside[start - 1]) || inside[start - 1] == '.')) --start;
      std::size_t k = start;
      if (const auto rate = number_at(inside, k); rate && *rate > 0 && k == u) out.seconds = per_step ? *rate : 1 / *rate;
    }
    return out;
  }
  return std::nullopt;
}

std::optional<StepLine> parse_step_line(std::string_view line) {
  if (line.find("elapsed time per iteration") != std::string_view::npos)
    if (auto m = parse_megatron_line(line)) return m;
  return parse_progress_line(line);
}

}  // namespace ctwin
