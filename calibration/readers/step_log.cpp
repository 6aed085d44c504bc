#include "calibration/readers/step_log.hpp"

#include "core/step_lines.hpp"
#include "core/units.hpp"

namespace ctwin::calib {

namespace {

bool to_double(const std::string& text, double& out) { return finite_number(text, out); }

}  // namespace

bool is_megatron_line(const std::string& line) {
  return line.find("elapsed time per iteration (ms)") != std::string::npos && line.find("iteration") != std::string::npos;
}

StepLog read_step_csv(std::istream& in, const std::string& file) {
  StepLog log;
  log.report.file = file;
  log.report.kind = "step-log";
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    const std::vector<std::string> names = split_csv(text);
    if (const std::string why = header_problem(names); !why.empty()) {
      log.report.problem(number, why);
      return false;
    }
    at = columns_of(names, {"node", "duration_s", "step", "stage", "role"});
    if (at[0] < 0 || at[1] < 0) {
      log.report.problem(number, "the header needs node and duration_s");
      return false;
    }
    return true;
  };
  read_lines(in, log.report, header, [&](int number, const std::string& text) {
    const std::vector<std::string> f = split_csv(text);
    StepRecord r;
    r.line = number;
    r.node = field_at(f, at, 0);
    double step = -1;
    if (r.node.empty() || !to_double(field_at(f, at, 1), r.duration_s) || !(r.duration_s > 0) || r.duration_s > kLongestSeconds) {
      log.report.problem(number, r.node.empty() ? "node is empty" : "duration_s must be a positive number of seconds, at most 1e12");
      return;
    }
    if (at[2] >= 0 && !field_at(f, at, 2).empty()) {
      if (!to_double(field_at(f, at, 2), step) || step < 0 || step > 1e15) {
        log.report.problem(number, "step must be a whole number");
        return;
      }
      r.step = static_cast<long>(step);
    }
    for (const auto& [which, key] : {std::pair{3, "stage="}, std::pair{4, "role="}})
      if (const std::string v = field_at(f, at, which); !v.empty()) {
        if (!r.peers.empty()) r.peers += ' ';
        r.peers.append(key).append(v);  // piece by piece: GCC 12 warns falsely (-Wrestrict) on a + chain
      }
    log.records.push_back(std::move(r));
    ++log.report.parsed;
  }, true);
  return log;
}

StepLog read_megatron_log(std::istream& in, const std::string& file) {
  StepLog log;
  log.report.file = file;
  log.report.kind = "megatron-log";
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty()) continue;
    ++log.report.lines;
    if (!is_megatron_line(text)) {
      ++log.report.skipped;
      continue;
    }
    StepRecord r;
    r.line = number;
    const auto m = parse_megatron_line(text);
    if (!m || !(m->seconds > 0) || m->seconds > kLongestSeconds) {
      log.report.problem(number, "an iteration line without a readable iteration number and elapsed time");
      continue;
    }
    r.step = static_cast<long>(m->step);
    r.duration_s = m->seconds;
    log.records.push_back(std::move(r));
    ++log.report.parsed;
  }
  return log;
}

}  // namespace ctwin::calib
