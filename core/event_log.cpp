#include "core/event_log.hpp"

#include <charconv>
#include <sstream>

namespace ctwin {

namespace {

bool to_int(const std::string& text, int& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size();
}

void write_row(std::ostream& out, const RunEvent& e, std::span<const EventClass> classes, std::string_view note) {
  out << exact_seconds(e.time) << ',';
  if (e.node >= 0) out << "node-" << e.node;
  out << ',';
  if (e.gpu >= 0) out << e.gpu;
  out << ',' << to_string(e.kind) << ',';
  if (e.code >= 0) out << e.code;
  out << ',';
  bool any = false;
  if (e.fault_class >= 0) {
    const EventClass& c = classes[static_cast<std::size_t>(e.fault_class)];
    out << c.name;
    if (e.component >= 0 && c.part) out << ' ' << c.part << '=' << e.component;
    any = true;
  }
  if (e.kind == EventKind::SlowBegin) out << (any ? " " : "") << "speed=" << e.speed, any = true;
  if (e.kind == EventKind::Shrunk || e.kind == EventKind::Grown) out << "replicas=" << e.component, any = true;
  if (note.empty()) return;
  if (any) out << ' ';
  for (char c : note) out << (c == ',' || c == '\n' || c == '\r' || c == '"' ? ' ' : c);
}

}  // namespace

std::string event_log_row(const RunEvent& event, std::span<const EventClass> classes, std::string_view note) {
  std::ostringstream out;
  write_row(out, event, classes, note);
  return out.str();
}

std::string ledger_rows(Micros wall, const Ledger& ledger) {
  std::string out;
  for (std::size_t c = 0; c < kCategoryCount; ++c)
    out += exact_seconds(wall) + ",,,ledger,," + kCategoryKeys[c] + '=' + exact_seconds(ledger.us[c]) + '\n';
  return out;
}

std::string event_log_csv(std::span<const EventClass> classes, std::span<const RunEvent> events, const Ledger* ledger, Micros wall) {
  std::ostringstream out;
  out << kEventLogHeader << '\n';
  for (const auto& e : events) {
    write_row(out, e, classes, {});
    out << '\n';
  }
  if (ledger) out << ledger_rows(wall, *ledger);
  return out.str();
}

EventLog read_event_log(std::istream& in, const std::string& file) {
  EventLog log;
  log.report.file = file;
  log.report.kind = "event-log";
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    const std::vector<std::string> names = split_csv(text);
    at = columns_of(names, {"time_s", "node", "gpu", "kind", "code", "detail"});
    if (names.size() != 6 || !header_problem(names).empty()) {
      log.report.problem(number, "the header must be " + std::string(kEventLogHeader));
      return false;
    }
    for (int i : at)
      if (i < 0) {
        log.report.problem(number, "the header must be " + std::string(kEventLogHeader));
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
    auto field = [&](int which) { return field_at(f, at, which); };
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
    if (field(3).empty()) {
      log.report.problem(number, "kind is empty");
      return;
    }
    const auto kind = event_kind_named(field(3));
    if (!kind) {
      log.report.problem(number, "unknown kind \"" + field(3) + "\" (docs/event-log.md)");
      return;
    }
    e.kind = *kind;
    e.detail = field(5);
    log.events.push_back(std::move(e));
    ++log.report.parsed;
  });
  return log;
}

std::string_view logged_class(const LoggedEvent& event) {
  switch (event.kind) {
    case EventKind::Fault: case EventKind::FaultIgnored: case EventKind::Interrupted: case EventKind::Detected:
    case EventKind::Diagnosed: case EventKind::SlowBegin: case EventKind::SlowEnd: case EventKind::Escalated:
    case EventKind::Rollback: case EventKind::Misdiagnosed:
      break;
    default:
      return {};
  }
  const std::string_view detail = event.detail;
  const std::string_view word = detail.substr(0, detail.find(' '));
  return word.find('=') == std::string_view::npos ? word : std::string_view{};
}

std::optional<std::string> detail_field(const std::string& detail, std::string_view key) {
  std::size_t at = 0;
  while (at < detail.size()) {
    const std::size_t end = std::min(detail.find(' ', at), detail.size());
    const std::string_view word = std::string_view(detail).substr(at, end - at);
    if (word.size() > key.size() && word.substr(0, key.size()) == key && word[key.size()] == '=') return std::string(word.substr(key.size() + 1));
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace ctwin
