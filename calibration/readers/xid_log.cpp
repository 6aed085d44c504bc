#include "calibration/readers/xid_log.hpp"

#include <algorithm>

#include "core/kernel_log.hpp"
#include "models/kernel_journal.hpp"

namespace ctwin::calib {

XidLog read_xid_log(std::istream& in, const std::string& file, const std::string& host, int year) {
  XidLog log;
  log.report.file = file;
  log.report.kind = "kernel-log";
  KernelLineClock clock(host, year);
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty() || text == "\r") continue;
    ++log.report.lines;
    if (!valid_utf8(text)) {  // its host or message would reach the report's JSON
      log.report.problem(number, "not UTF-8 text");
      continue;
    }
    std::string_view line(text);
    std::optional<KernelStamp> stamp;
    std::optional<JournalEntry> entry;
    if (is_journal_json(line)) {  // journalctl -o json: the stamp and host are fields, the message is MESSAGE
      std::string why;
      if (!(entry = journal_json_entry(line, why))) {
        log.report.problem(number, why);
        continue;
      }
      if (entry->stamp.host.empty()) entry->stamp.host = host;
      stamp = entry->stamp;
      line = entry->from_kernel ? std::string_view(entry->message) : std::string_view();  // another program's: not an Xid
    } else {
      stamp = clock.stamp(line);
    }
    if (stamp) {
      auto [it, added] = log.window.try_emplace(stamp->host, stamp->time_s, stamp->time_s);
      it->second.first = std::min(it->second.first, stamp->time_s);
      it->second.second = std::max(it->second.second, stamp->time_s);
    }
    XidReport xid;
    std::string why;
    const XidLine kind = parse_xid_line(line, xid, why);
    if (kind == XidLine::NotXid) {
      ++log.report.skipped;
      continue;
    }
    if (!stamp) {
      log.report.problem(number, "an Xid line without a timestamp this reader knows (dmesg, dmesg -T, syslog, ISO 8601, journal JSON)");
      continue;
    }
    if (kind == XidLine::Malformed) {
      log.report.problem(number, why);
      continue;
    }
    log.events.push_back({stamp->time_s, stamp->host, std::move(xid.pci), xid.xid, std::move(xid.message), number});
    ++log.report.parsed;
  }
  return log;
}

}  // namespace ctwin::calib
