#include "core/kernel_log.hpp"

#include <cmath>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "core/text_records.hpp"

namespace ctwin {

namespace {

constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int month_of(std::string_view name) {
  for (int m = 0; m < 12; ++m)
    if (name == kMonths[m]) return m + 1;
  return 0;
}

//! A calendar date and clock a log could carry: out of range, the stamp is no stamp (a forged or
//! corrupt line must not become a date decades away, nor a fault).
bool plausible_time(int year, int month, int day, int hour, int minute, int second) {
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return year >= 1970 && year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= kDays[month - 1] && hour >= 0 && hour <= 23 &&
         minute >= 0 && minute <= 59 && second >= 0 && second <= 60;
}

//! A PCI bus id as the driver prints it ("0000:3b:00", "3b:00.0"): hexadecimal digits, ':' and '.'.
bool plausible_bus_id(std::string_view bus) {
  if (bus.empty() || bus.size() > 32) return false;
  for (const char c : bus)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
  return true;
}

std::string_view next_token(std::string_view text, std::size_t& at) {
  while (at < text.size() && text[at] == ' ') ++at;
  const std::size_t start = at;
  while (at < text.size() && text[at] != ' ') ++at;
  return text.substr(start, at - start);
}

//! Whether the text before "NVRM: Xid" is the kernel's own prefix: nothing, a dmesg stamp
//! ("[ 123.4]", "[Thu Mar 21 ...]"), or a syslog/journal line whose only tag is "kernel:"
//! (optionally followed by the dmesg stamp). Any other program's message (`logger "NVRM: Xid ..."`
//! gives "host root: NVRM: Xid") is not a kernel record.
bool kernel_tagged(std::string_view head) {
  auto trim = [](std::string_view& t) {
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  };
  trim(head);
  if (!head.empty() && head.back() == ']') {
    const std::size_t open = head.rfind('[');
    if (open == std::string_view::npos) return false;
    head = head.substr(0, open);
    trim(head);
  }
  if (head.empty()) return true;
  std::size_t at = 0, tags = 0;
  std::string_view last;
  while (at < head.size()) {
    last = next_token(head, at);
    if (!last.empty() && last.back() == ':') ++tags;
  }
  return tags == 1 && last == "kernel:";
}

}  // namespace

std::optional<KernelStamp> KernelLineClock::stamp(std::string_view line) {
  KernelStamp stamp{0, host_};
  if (line.empty()) return std::nullopt;
  if (line[0] == '[') {  // dmesg: seconds since boot, or dmesg -T's date
    const std::size_t close = line.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string inside(line.substr(1, close - 1));
    char* end = nullptr;
    const double boot = std::strtod(inside.c_str(), &end);
    // Seconds since boot, of a machine up at most a century: a larger stamp (or nan, inf, a negative
    // one) is no stamp, and its line is malformed rather than a window of 1e61 GPU-hours.
    constexpr double kLongestUptime_s = 100 * 365.25 * 86400;
    if (end && *end == '\0' && end != inside.c_str() && std::isfinite(boot) && boot >= 0 && boot <= kLongestUptime_s) {
      stamp.time_s = boot;
      return stamp;
    }
    char weekday[4], month[4];
    int d, h, mi, s, y;
    if (std::sscanf(inside.c_str(), "%3s %3s %d %d:%d:%d %d", weekday, month, &d, &h, &mi, &s, &y) == 7 && month_of(month) &&
        plausible_time(y, month_of(month), d, h, mi, s)) {
      stamp.time_s = epoch_seconds(y, month_of(month), d, h, mi, s);
      return stamp;
    }
    return std::nullopt;
  }
  std::size_t used = 0;
  if (std::isdigit(static_cast<unsigned char>(line[0])) && parse_iso_time(line, stamp.time_s, &used)) {
    std::size_t at = used;
    stamp.host = std::string(next_token(line, at));
    return stamp;
  }
  // Syslog: "Mar 21 13:34:34 host ..."
  std::size_t at = 0;
  const int month = month_of(next_token(line, at));
  if (!month) return std::nullopt;
  const std::string day(next_token(line, at)), clock(next_token(line, at));
  int h, mi, s;
  if (std::sscanf(clock.c_str(), "%d:%d:%d", &h, &mi, &s) != 3 || !plausible_time(year_, month, std::atoi(day.c_str()), h, mi, s))
    return std::nullopt;
  if (last_month_ && month < last_month_) ++year_;  // the log crossed a new year
  last_month_ = month;
  stamp.time_s = epoch_seconds(year_, month, std::atoi(day.c_str()), h, mi, s);
  stamp.host = std::string(next_token(line, at));
  return stamp;
}

XidLine parse_xid_line(std::string_view line, XidReport& report, std::string& why) {
  const std::size_t at = line.find("NVRM: Xid");
  if (at == std::string_view::npos || !kernel_tagged(line.substr(0, at))) return XidLine::NotXid;
  // "(PCI:0000:3b:00): 79, rest" or "(0000:3b:00): 79, rest"
  const std::size_t open = line.find('(', at), close = line.find("): ", at);
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    why = "expected \"NVRM: Xid (BUS-ID): CODE, ...\"";
    return XidLine::Malformed;
  }
  std::string_view bus = line.substr(open + 1, close - open - 1);
  if (bus.substr(0, 4) == "PCI:") bus.remove_prefix(4);
  const std::string_view after = line.substr(close + 3);
  int xid = 0;
  const auto [end, error] = std::from_chars(after.data(), after.data() + after.size(), xid);
  if (error != std::errc() || xid <= 0 || xid > kLargestXid || bus.empty()) {
    why = "the Xid code is not a number from 1 to " + std::to_string(kLargestXid);
    return XidLine::Malformed;
  }
  if (!plausible_bus_id(bus)) {
    why = "the bus id is not a PCI address (hexadecimal digits, ':' and '.')";
    return XidLine::Malformed;
  }
  std::string_view message(end, static_cast<std::size_t>(after.data() + after.size() - end));
  while (!message.empty() && (message.front() == ',' || message.front() == ' ')) message.remove_prefix(1);
  report = {std::string(bus), xid, std::string(message)};
  return XidLine::Xid;
}

}  // namespace ctwin
