#include "live/precheck/injection.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>

namespace ctwin::live {

namespace {

struct Spelling {
  Injection::Kind kind;
  std::string_view name;
  std::string_view value;  //!< empty: takes none
};
constexpr Spelling kSpellings[] = {{Injection::Kind::Slow, "slow", "F"},    {Injection::Kind::Delay, "delay", "S"},
                                   {Injection::Kind::Noisy, "noisy", "S"},  {Injection::Kind::Stuck, "stuck", ""},
                                   {Injection::Kind::Hang, "hang", ""},     {Injection::Kind::Corrupt, "corrupt", ""},
                                   {Injection::Kind::Memory, "memory", "F"}};

const Spelling& spelling(Injection::Kind kind) {
  return *std::find_if(std::begin(kSpellings), std::end(kSpellings), [kind](const Spelling& s) { return s.kind == kind; });
}

bool in_range(Injection::Kind kind, double v) {
  switch (kind) {
    case Injection::Kind::Slow: return v > 1;
    case Injection::Kind::Delay:
    case Injection::Kind::Noisy: return v >= 0;
    case Injection::Kind::Memory: return v > 0 && v <= 1;
    default: return true;
  }
}

}  // namespace

std::string Injection::text() const {
  const Spelling& s = spelling(kind);
  std::string out(s.name);
  if (s.value.empty()) return out;
  char number[32];
  const auto [end, ec] = std::to_chars(number, number + sizeof number, value);
  return out.append("=").append(number, ec == std::errc() ? end : number);
}

std::optional<Injection> parse_injection(std::string_view text, std::initializer_list<Injection::Kind> allowed) {
  const auto eq = text.find('=');
  const std::string_view name = text.substr(0, eq);
  for (const Injection::Kind kind : allowed) {
    const Spelling& s = spelling(kind);
    if (name != s.name || (eq == std::string_view::npos) != s.value.empty()) continue;
    if (s.value.empty()) return Injection{kind};
    const std::string_view number = text.substr(eq + 1);
    double v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(v) || !in_range(kind, v)) return std::nullopt;
    return Injection{kind, v};
  }
  return std::nullopt;
}

std::string injection_choices(std::initializer_list<Injection::Kind> allowed) {
  std::string out;
  std::size_t i = 0;
  for (const Injection::Kind kind : allowed) {
    const Spelling& s = spelling(kind);
    if (i > 0) out += i + 1 == allowed.size() ? " or " : ", ";
    out.append(s.name);
    if (!s.value.empty()) out.append("=").append(s.value);
    ++i;
  }
  return out;
}

}  // namespace ctwin::live
