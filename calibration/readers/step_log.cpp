#include "calibration/readers/step_log.hpp"

#include <regex>

namespace ctwin::calib {

namespace {

bool to_double(const std::string& text, double& out) {
  try {
    std::size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

const std::regex& megatron_pattern() {
  static const std::regex pattern(R"(iteration\s+(\d+)\s*/\s*\d+\s*\|.*elapsed time per iteration \(ms\):\s*([0-9.eE+-]+))");
  return pattern;
}

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
    at = columns_of(split_csv(text), {"node", "duration_s", "step", "stage", "role"});
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
    if (r.node.empty() || !to_double(field_at(f, at, 1), r.duration_s) || !(r.duration_s > 0)) {
      log.report.problem(number, r.node.empty() ? "node is empty" : "duration_s must be a positive number");
      return;
    }
    if (at[2] >= 0 && !field_at(f, at, 2).empty()) {
      if (!to_double(field_at(f, at, 2), step) || step < 0) {
        log.report.problem(number, "step must be a whole number");
        return;
      }
      r.step = static_cast<long>(step);
    }
    for (const auto& [which, key] : {std::pair{3, "stage="}, std::pair{4, "role="}})
      if (const std::string v = field_at(f, at, which); !v.empty()) r.peers += (r.peers.empty() ? "" : " ") + std::string(key) + v;
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
  std::smatch m;
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
    if (!std::regex_search(text, m, megatron_pattern()) || !to_double(m[2].str(), r.duration_s) || !(r.duration_s > 0)) {
      log.report.problem(number, "an iteration line without a readable elapsed time");
      continue;
    }
    r.step = std::stol(m[1].str());
    r.duration_s /= 1000;
    log.records.push_back(std::move(r));
    ++log.report.parsed;
  }
  return log;
}

}  // namespace ctwin::calib
