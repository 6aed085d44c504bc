#include "calibration/readers/xid_log.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace ctwin::calib {

namespace {

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int month_of(std::string_view name) {
  for (int m = 0; m < 12; ++m)
    if (name == kMonths[m]) return m + 1;
  return 0;
}

std::string_view next_token(std::string_view text, std::size_t& at) {
  while (at < text.size() && text[at] == ' ') ++at;
  const std::size_t start = at;
  while (at < text.size() && text[at] != ' ') ++at;
  return text.substr(start, at - start);
}

//! The line's timestamp and host, where its format has them. False when the prefix is unknown.
struct Stamp {
  double time_s = 0;
  std::string host;
};
bool read_prefix(std::string_view line, const std::string& default_host, int& year, int& last_month, Stamp& stamp) {
  stamp.host = default_host;
  if (line.empty()) return false;
  if (line[0] == '[') {  // dmesg: seconds since boot, or dmesg -T's date
    const std::size_t close = line.find(']');
    if (close == std::string_view::npos) return false;
    std::string inside(line.substr(1, close - 1));
    char* end = nullptr;
    const double boot = std::strtod(inside.c_str(), &end);
    if (end && *end == '\0' && end != inside.c_str()) {
      stamp.time_s = boot;
      return true;
    }
    char weekday[4], month[4];
    int d, h, mi, s, y;
    if (std::sscanf(inside.c_str(), "%3s %3s %d %d:%d:%d %d", weekday, month, &d, &h, &mi, &s, &y) == 7 && month_of(month)) {
      stamp.time_s = epoch_seconds(y, month_of(month), d, h, mi, s);
      return true;
    }
    return false;
  }
  std::size_t used = 0;
  if (std::isdigit(static_cast<unsigned char>(line[0])) && parse_iso_time(line, stamp.time_s, &used)) {
    std::size_t at = used;
    stamp.host = std::string(next_token(line, at));
    return true;
  }
  // Syslog: "Mar 21 13:34:34 host ..."
  std::size_t at = 0;
  const int month = month_of(next_token(line, at));
  if (!month) return false;
  const std::string day(next_token(line, at)), clock(next_token(line, at));
  int h, mi, s;
  if (std::sscanf(clock.c_str(), "%d:%d:%d", &h, &mi, &s) != 3) return false;
  if (last_month && month < last_month) ++year;  // the log crossed a new year
  last_month = month;
  stamp.time_s = epoch_seconds(year, month, std::atoi(day.c_str()), h, mi, s);
  stamp.host = std::string(next_token(line, at));
  return true;
}

}  // namespace

XidLog read_xid_log(std::istream& in, const std::string& file, const std::string& host, int year) {
  XidLog log;
  log.report.file = file;
  log.report.kind = "kernel-log";
  std::string text;
  int number = 0, last_month = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty() || text == "\r") continue;
    ++log.report.lines;
    const std::string_view line(text);
    Stamp stamp;
    const bool stamped = read_prefix(line, host, year, last_month, stamp);
    if (stamped) {
      auto [it, added] = log.window.try_emplace(stamp.host, stamp.time_s, stamp.time_s);
      it->second.first = std::min(it->second.first, stamp.time_s);
      it->second.second = std::max(it->second.second, stamp.time_s);
    }
    const std::size_t at = line.find("NVRM: Xid");
    if (at == std::string_view::npos) {
      ++log.report.skipped;
      continue;
    }
    if (!stamped) {
      log.report.problem(number, "an Xid line without a timestamp this reader knows (dmesg, dmesg -T, syslog, ISO 8601)");
      continue;
    }
    // "(PCI:0000:3b:00): 79, rest" or "(0000:3b:00): 79, rest"
    const std::size_t open = line.find('(', at), close = line.find("): ", at);
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      log.report.problem(number, "expected \"NVRM: Xid (BUS-ID): CODE, ...\"");
      continue;
    }
    std::string_view bus = line.substr(open + 1, close - open - 1);
    if (bus.substr(0, 4) == "PCI:") bus.remove_prefix(4);
    const std::string_view after = line.substr(close + 3);
    int xid = 0;
    const auto [end, error] = std::from_chars(after.data(), after.data() + after.size(), xid);
    if (error != std::errc() || xid <= 0 || bus.empty()) {
      log.report.problem(number, "the Xid code is not a positive number");
      continue;
    }
    std::string_view message(end, static_cast<std::size_t>(after.data() + after.size() - end));
    while (!message.empty() && (message.front() == ',' || message.front() == ' ')) message.remove_prefix(1);
    log.events.push_back({stamp.time_s, stamp.host, std::string(bus), xid, std::string(message), number});
    ++log.report.parsed;
  }
  return log;
}

}  // namespace ctwin::calib
