#include "live/supervisor/worker_failures.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/wall_clock.hpp"

namespace ctwin::live {

namespace {

using SystemClock = std::chrono::system_clock;

constexpr std::size_t kLongestRecord = 1 << 16;  //!< a record is read this far (a traceback's head is enough)
constexpr std::size_t kLongestWhat = 300;

std::optional<SystemClock::time_point> modified(const std::filesystem::path& path, std::uintmax_t& size) {
  struct stat s {};
  if (::stat(path.c_str(), &s) != 0 || !S_ISREG(s.st_mode)) return std::nullopt;
  size = static_cast<std::uintmax_t>(s.st_size);
  return SystemClock::time_point(std::chrono::duration_cast<SystemClock::duration>(std::chrono::seconds(s.st_mtim.tv_sec) +
                                                                                  std::chrono::nanoseconds(s.st_mtim.tv_nsec)));
}

std::string head_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text(kLongestRecord, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

//! One line of printable text, bounded: it goes into an event row.
std::string one_line(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  if (text.size() > kLongestWhat) text = text.substr(0, kLongestWhat - 3) + "...";
  return text;
}

std::string trimmed(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  const auto last = line.find_last_not_of(" \t\r");
  return first == std::string::npos ? std::string() : line.substr(first, last - first + 1);
}

//! `File "/x/train.py", line 142 in main` -> "train.py:142 in main".
std::string frame(const std::string& line) {
  const auto open = line.find('"'), close = line.find('"', open + 1);
  if (open == std::string::npos || close == std::string::npos) return trimmed(line);
  const std::string file = std::filesystem::path(line.substr(open + 1, close - open - 1)).filename();
  std::string rest = line.substr(close + 1);  // `, line 142 in main`
  const auto at = rest.find("line ");
  return at == std::string::npos ? file : file + ":" + trimmed(rest.substr(at + 5));
}

//! faulthandler's report: its first line, and the innermost frame (the first one it lists).
std::string fatal_what(const std::string& text) {
  std::istringstream lines(text);
  std::string line, what, where;
  while (std::getline(lines, line)) {
    if (what.empty() && !trimmed(line).empty()) what = trimmed(line);
    else if (where.empty() && trimmed(line).rfind("File ", 0) == 0) where = frame(trimmed(line));
  }
  return where.empty() ? what : what + " at " + where;
}

//! ctwin_flash's exception record: the exception, then where it was raised.
std::string error_what(const std::string& text) {
  std::istringstream lines(text);
  std::string what, where;
  std::getline(lines, what);
  std::getline(lines, where);
  return trimmed(where).empty() ? trimmed(what) : trimmed(what) + " at " + trimmed(where);
}

//! torch.distributed.elastic's error file: {"message": {"message": ..., "extraInfo": {"timestamp": ...}}}
//! (or a plain message string), and torchrun's copy adds "errorCode".
std::optional<WorkerFailure> torch_error(const std::string& text, SystemClock::time_point written) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return std::nullopt;
  WorkerFailure f{"", written, ""};
  const auto& m = j["message"];
  if (m.is_string()) f.what = m.get<std::string>();
  if (m.is_object() && m.contains("message") && m["message"].is_string()) f.what = m["message"].get<std::string>();
  if (m.is_object() && m.contains("extraInfo") && m["extraInfo"].is_object()) {
    const auto& stamp = m["extraInfo"].value("timestamp", nlohmann::json());
    long long seconds = 0;
    if (stamp.is_string() && std::istringstream(stamp.get<std::string>()) >> seconds && seconds > 0)
      f.at = std::min(written, SystemClock::time_point(std::chrono::seconds(seconds)));  // it says whole seconds
  }
  if (j.contains("errorCode") && j["errorCode"].is_number_integer()) f.what += " (exit code " + std::to_string(j["errorCode"].get<long long>()) + ")";
  return f;
}

}  // namespace

std::optional<WorkerFailure> first_worker_failure(const std::string& folder) {
  std::optional<WorkerFailure> first;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename();
    std::uintmax_t size = 0;
    const auto written = modified(entry.path(), size);
    if (!written || size == 0) continue;  // faulthandler's file is opened at the start, written at the failure
    std::optional<WorkerFailure> f;
    const auto dot = name.rfind('.');
    const bool own = name.rfind("rank-", 0) == 0 && dot != std::string::npos;
    if (own && name.substr(dot) == ".fatal") f = WorkerFailure{name.substr(5, dot - 5), *written, fatal_what(head_of(entry.path()))};
    else if (own && name.substr(dot) == ".error") f = WorkerFailure{name.substr(5, dot - 5), *written, error_what(head_of(entry.path()))};
    else if (name == kTorchErrorFile) f = torch_error(head_of(entry.path()), *written);
    if (!f) continue;
    f->what = one_line(f->what);
    if (!first || f->at < first->at) first = std::move(f);
  }
  return first;
}

std::string describe(const WorkerFailure& failure) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(failure.at.time_since_epoch()).count();
  return (failure.rank.empty() ? std::string("a worker") : "rank " + failure.rank) + " failed first, at " + utc_text(us) + ": " + failure.what;
}

}  // namespace ctwin::live
