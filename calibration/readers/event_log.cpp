#include "calibration/readers/event_log.hpp"

#include <charconv>

namespace ctwin::calib {

namespace {

bool to_int(const std::string& text, int& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

EventLog read_event_log(std::istream& in, const std::string& file) {
  EventLog log;
  log.report.file = file;
  log.report.kind = "event-log";
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    at = columns_of(split_csv(text), {"time_s", "node", "gpu", "kind", "code", "detail"});
    for (int i : at)
      if (i < 0) {
        log.report.problem(number, "the header must be time_s,node,gpu,kind,code,detail");
        return false;
      }
    return true;
  };
  read_lines(in, log.report, header, [&](int number, const std::string& text) {
    const std::vector<std::string> f = split_csv(text);
    if (f.size() != 6) {
      log.report.problem(number, "expected 6 fields, found " + std::to_string(f.size()));
      return;
    }
    auto field = [&](int which) { return f[static_cast<std::size_t>(at[static_cast<std::size_t>(which)])]; };
    LoggedEvent e;
    e.line = number;
    try {
      std::size_t used = 0;
      e.time_s = std::stod(field(0), &used);
      if (used != field(0).size() || e.time_s < 0) throw std::invalid_argument("time");
    } catch (const std::exception&) {
      log.report.problem(number, "time_s is not a non-negative number");
      return;
    }
    const std::string node = field(1);
    if (!node.empty() && (node.rfind("node-", 0) != 0 || !to_int(node.substr(5), e.node) || e.node < 0)) {
      log.report.problem(number, "node must be node-<id>");
      return;
    }
    if ((!field(2).empty() && !to_int(field(2), e.gpu)) || (!field(4).empty() && !to_int(field(4), e.code))) {
      log.report.problem(number, "gpu and code must be whole numbers");
      return;
    }
    e.kind = field(3);
    e.detail = field(5);
    if (e.kind.empty()) {
      log.report.problem(number, "kind is empty");
      return;
    }
    log.events.push_back(std::move(e));
    ++log.report.parsed;
  });
  return log;
}

}  // namespace ctwin::calib
