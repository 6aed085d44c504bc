#include "calibration/readers/step_log.hpp"

#include <cctype>
#include <cstring>

namespace ctwin::calib {

namespace {

bool to_double(const std::string& text, double& out) { return finite_number(text, out); }

//! Megatron's "iteration N/ M | ... elapsed time per iteration (ms): X |": N and X, read by hand.
//! (A std::regex over a 50 KB line recursed until the stack overflowed.)
bool read_megatron_fields(const std::string& line, long long& iteration, std::string& elapsed) {
  const std::size_t it = line.find("iteration");
  if (it == std::string::npos) return false;
  std::size_t i = it + 9;
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  const std::size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == digits || i - digits > 15) return false;  // beyond 10^15 iterations is not a log
  iteration = std::stoll(line.substr(digits, i - digits));
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  if (i >= line.size() || line[i] != '/') return false;
  static const std::string kElapsed = "elapsed time per iteration (ms):";
  const std::size_t e = line.find(kElapsed, i);
  if (e == std::string::npos || line.find('|', i) > e) return false;
  std::size_t v = e + kElapsed.size();
  while (v < line.size() && std::isspace(static_cast<unsigned char>(line[v]))) ++v;
  std::size_t w = v;
  while (w < line.size() && std::strchr("0123456789.eE+-", line[w]) && line[w] != '\0') ++w;
  elapsed = line.substr(v, w - v);
  return !elapsed.empty();
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
    if (r.node.empty() || !to_double(field_at(f, at, 1), r.duration_s) || !(r.duration_s > 0)) {
      log.report.problem(number, r.node.empty() ? "node is empty" : "duration_s must be a positive number");
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
    long long iteration = 0;
    std::string elapsed;
    if (!read_megatron_fields(text, iteration, elapsed) || !to_double(elapsed, r.duration_s) || !(r.duration_s > 0)) {
      log.report.problem(number, "an iteration line without a readable iteration number and elapsed time");
      continue;
    }
    r.step = static_cast<long>(iteration);
    r.duration_s /= 1000;
    log.records.push_back(std::move(r));
    ++log.report.parsed;
  }
  return log;
}

}  // namespace ctwin::calib
