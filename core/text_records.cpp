#include "core/text_records.hpp"

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
    const int sign = text[i] == '-' ? -1 : 1;
    int oh = 0, om = 0;
    std::string zone(text.substr(i + 1, 5));
    if (std::sscanf(zone.c_str(), "%2d:%2d", &oh, &om) == 2) i += 6;
    else if (std::sscanf(zone.c_str(), "%2d%2d", &oh, &om) == 2) i += 5;
    else return false;
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

}  // namespace ctwin
