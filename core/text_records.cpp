#include "core/text_records.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <cstdio>

namespace ctwin {

void ReadReport::require_some() const {
  if (parsed > 0) return;
  if (malformed.empty()) throw TraceUnreadable(file + ": no " + kind + " records found");
  throw TraceUnreadable(file + ": nothing parses as a " + kind + "; line " + std::to_string(malformed.front().line) + ": " +
                        malformed.front().reason);
}

std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<int> columns_of(const std::vector<std::string>& header, const std::vector<std::string>& wanted) {
  std::vector<int> at(wanted.size(), -1);
  for (std::size_t w = 0; w < wanted.size(); ++w)
    for (std::size_t h = 0; h < header.size(); ++h)
      if (header[h] == wanted[w]) at[w] = static_cast<int>(h);
  return at;
}

std::string header_problem(const std::vector<std::string>& header) {
  for (std::size_t i = 0; i < header.size(); ++i)
    for (std::size_t j = i + 1; j < header.size(); ++j)
      if (!header[i].empty() && header[i] == header[j]) return "the header names column \"" + header[i] + "\" twice";
  return "";
}

bool finite_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value) || errno == ERANGE) return false;
  out = value;
  return true;
}

bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    int more = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
    if (more < 0 || (c == 0xc0 || c == 0xc1) || c > 0xf4 || i + static_cast<std::size_t>(more) >= text.size())
      return false;
    for (int k = 1; k <= more; ++k)
      if ((static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]) >> 6) != 0x2) return false;
    if (more == 2) {  // no overlong forms, no UTF-16 surrogates
      const auto d = static_cast<unsigned char>(text[i + 1]);
      if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f)) return false;
    } else if (more == 3) {
      const auto d = static_cast<unsigned char>(text[i + 1]);
      if ((c == 0xf0 && d < 0x90) || (c == 0xf4 && d > 0x8f)) return false;
    }
    i += static_cast<std::size_t>(more) + 1;
  }
  return true;
}

double epoch_seconds(int year, int month, int day, int hour, int minute, double second) {
  using namespace std::chrono;
  const sys_days date{std::chrono::year{year} / month / day};
  return static_cast<double>(date.time_since_epoch().count()) * 86400.0 + hour * 3600.0 + minute * 60.0 + second;
}

bool parse_iso_time(std::string_view text, double& seconds, std::size_t* used) {
  int y, mo, d, h, mi, s, n = 0;
  const std::string head(text.substr(0, 19));
  if (head.size() < 19 || std::sscanf(head.c_str(), "%4d-%2d-%2d%*1[T ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &s, &n) != 6 || n != 19)
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  std::size_t i = 19;
  double fraction = 0;
  if (i < text.size() && (text[i] == '.' || text[i] == ',')) {
    double scale = 0.1;
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, scale /= 10) fraction += (text[i] - '0') * scale;
  }
  double offset = 0;
  if (i < text.size() && text[i] == 'Z') {
    ++i;
  } else if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    // "+01:00" or "+0100", each field exactly two digits: a short zone ("+01:0") is not a time.
    const int sign = text[i] == '-' ? -1 : 1;
    auto two_digits = [&](std::size_t at, int& value) {
      if (at + 2 > text.size() || !std::isdigit(static_cast<unsigned char>(text[at])) ||
          !std::isdigit(static_cast<unsigned char>(text[at + 1])))
        return false;
      value = (text[at] - '0') * 10 + (text[at + 1] - '0');
      return true;
    };
    int oh = 0, om = 0;
    std::size_t j = i + 1;
    if (!two_digits(j, oh)) return false;
    j += 2;
    if (j < text.size() && text[j] == ':') ++j;
    if (!two_digits(j, om) || oh > 23 || om > 59) return false;
    i = j + 2;
    offset = sign * (oh * 3600.0 + om * 60.0);
  }
  seconds = epoch_seconds(y, mo, d, h, mi, s + fraction) - offset;
  if (used) *used = i;
  return true;
}

std::ifstream open_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceUnreadable(path + ": cannot open");
  return in;
}

std::string first_line(const std::string& path) {
  std::ifstream in = open_trace(path);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') return line;
  return "";
}

bool read_csv_header(ReadReport& report, int number, const std::string& text, const std::vector<std::string>& wanted,
                     const std::vector<int>& required, const std::string& needs, std::vector<int>& at) {
  const std::vector<std::string> names = split_csv(text);
  if (const std::string why = header_problem(names); !why.empty()) {
    report.problem(number, why);
    return false;
  }
  at = columns_of(names, wanted);
  for (const int i : required)
    if (at[static_cast<std::size_t>(i)] < 0) {
      report.problem(number, "the header needs " + needs);
      return false;
    }
  return true;
}

}  // namespace ctwin
