#include "calibration/readers/slurm_sacct.hpp"

#include <sstream>

namespace ctwin::calib {

namespace {

std::vector<std::string> split(const std::string& line, char by) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, by)) out.push_back(field);
  if (!line.empty() && line.back() == by) out.emplace_back();
  return out;
}

//! Splits on commas outside brackets.
std::vector<std::string> top_level_items(const std::string& list) {
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) items.emplace_back();
    else items.back() += c;
  }
  return items;
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list, std::size_t most) {
  if (list.empty() || list == "None assigned" || list == "(null)") return {};
  struct Range {
    std::string prefix, suffix, first;
    long long a = 0, b = 0;
  };
  std::vector<Range> ranges;
  std::size_t count = 0;
  for (const std::string& item : top_level_items(list)) {
    const std::size_t open = item.find('[');
    if (open == std::string::npos) {
      if (!item.empty()) ranges.push_back({item, "", "", -1, -1}), ++count;
      if (count > most) return {};
      continue;
    }
    const std::size_t close = item.find(']', open);
    if (close == std::string::npos) return {};
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (const std::string& range : split(item.substr(open + 1, close - open - 1), ',')) {
      const std::size_t dash = range.find('-');
      const std::string first = range.substr(0, dash);
      const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
      if (first.empty() || last.empty() || first.size() > 15 || last.size() > 15 ||
          first.find_first_not_of("0123456789") != std::string::npos || last.find_first_not_of("0123456789") != std::string::npos)
        return {};
      const long long a = std::stoll(first), b = std::stoll(last);
      if (b < a) return {};
      count += static_cast<std::size_t>(b - a + 1);
      if (count > most) return {};
      ranges.push_back({prefix, suffix, first, a, b});
    }
  }
  std::vector<std::string> hosts;
  hosts.reserve(count);
  for (const auto& r : ranges) {
    if (r.a < 0) {
      hosts.push_back(r.prefix);
      continue;
    }
    for (long long n = r.a; n <= r.b; ++n) {
      std::string digits = std::to_string(n);
      if (digits.size() < r.first.size()) digits.insert(0, r.first.size() - digits.size(), '0');
      hosts.push_back(r.prefix + digits + r.suffix);
    }
  }
  return hosts;
}

SlurmLog read_sacct(std::istream& in, const std::string& file) {
  SlurmLog log;
  log.report.file = file;
  log.report.kind = "sacct";
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    const std::vector<std::string> names = split(text, '|');
    if (const std::string why = header_problem(names); !why.empty()) {
      log.report.problem(number, why);
      return false;
    }
    at = columns_of(names, {"JobID", "State", "Start", "End", "NNodes", "NodeList", "ExitCode"});
    for (int i = 0; i < 5; ++i)
      if (at[static_cast<std::size_t>(i)] < 0) {
        log.report.problem(number, "the header needs JobID, State, Start, End and NNodes (sacct --parsable2)");
        return false;
      }
    return true;
  };
  read_lines(in, log.report, header, [&](int number, const std::string& text) {
    const std::vector<std::string> f = split(text, '|');
    if (f.size() < 5) {
      log.report.problem(number, "expected the header's fields separated by |");
      return;
    }
    SlurmJob job;
    job.id = field_at(f, at, 0);
    const std::string state = field_at(f, at, 1), end = field_at(f, at, 3);
    if (job.id.find('.') != std::string::npos || end == "Unknown" || end == "None") {
      ++log.report.skipped;  // a job step, or a job still running
      return;
    }
    job.state = state.substr(0, state.find(' '));
    if (!parse_iso_time(field_at(f, at, 2), job.start_s) || !parse_iso_time(end, job.end_s)) {
      log.report.problem(number, "Start and End must be times like 2024-01-05T10:00:00");
      return;
    }
    try {
      job.nodes = std::stoi(field_at(f, at, 4));
    } catch (const std::exception&) {
      job.nodes = 0;
    }
    if (job.nodes > 10'000'000) {
      log.report.problem(number, "NNodes beyond 10,000,000 is not a job");
      return;
    }
    if (job.nodes < 1 || job.end_s < job.start_s || job.state.empty()) {
      log.report.problem(number, job.nodes < 1 ? "NNodes must be a positive number" : job.state.empty() ? "State is empty"
                                                                                                        : "End is before Start");
      return;
    }
    // A list naming more hosts than the job had is not this job's: it is read as unknown.
    job.node_list = expand_hostlist(field_at(f, at, 5), static_cast<std::size_t>(job.nodes));
    job.exit_code = field_at(f, at, 6);
    job.line = number;
    log.jobs.push_back(std::move(job));
    ++log.report.parsed;
  });
  return log;
}

}  // namespace ctwin::calib
