#include "live/job/live_event_log.hpp"

#include <cstdlib>

#include "core/atomic_file.hpp"
#include "core/units.hpp"

namespace ctwin::live {

int LiveEventLog::class_index(const std::string& name) {
  for (std::size_t i = 0; i < classes_.size(); ++i)
    if (classes_[i].name == name) return static_cast<int>(i);
  classes_.push_back({name, nullptr});
  return static_cast<int>(classes_.size() - 1);
}

void LiveEventLog::add(Micros at, EventKind kind, std::string_view note, int node, int gpu, int code, const std::string& fault_class,
                       double speed) {
  RunEvent event;
  event.time = at;
  event.node = node;
  event.gpu = gpu;
  event.kind = kind;
  event.code = code;
  if (!fault_class.empty()) event.fault_class = class_index(fault_class);
  event.speed = speed;
  add(event, note);
}

void LiveEventLog::add(const RunEvent& event, std::string_view note) {
  auto place = times_.end();  // after the last row no later than it: most come in order
  while (place != times_.begin() && *(place - 1) > event.time) --place;
  rows_.insert(rows_.begin() + (place - times_.begin()), event_log_row(event, classes_, note));
  times_.insert(place, event.time);
  dirty_ = true;
}

std::vector<std::string> LiveEventLog::class_names() const {
  std::vector<std::string> names;
  for (const auto& c : classes_) names.push_back(c.name);
  return names;
}

void LiveEventLog::resume(const std::vector<std::string>& class_names, std::vector<std::string> rows) {
  classes_.clear();
  for (const auto& name : class_names) classes_.push_back({name, nullptr});
  rows_ = std::move(rows);
  times_.clear();
  for (const auto& r : rows_) times_.push_back(seconds_to_micros(std::strtod(r.c_str(), nullptr)));  // a row starts with its time_s
  dirty_ = true;
}

void LiveEventLog::flush(bool force) {
  if (path_.empty() || !dirty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - written_ < std::chrono::seconds(1)) return;
  std::string text = std::string(kEventLogHeader) + '\n';
  for (const auto& r : rows_) text += r + '\n';
  write_file_atomically(path_, text + ledger_rows_);
  written_ = now;
  dirty_ = false;
}

void LiveEventLog::close(Micros wall, const Ledger& ledger) {
  RunEvent end;
  end.time = wall;
  end.kind = EventKind::End;
  add(end);
  ledger_rows_ = ledger_rows(wall, ledger);
  flush(true);
}

void LiveEventLog::interruption(Micros at, int node, int gpu, int code, const LiveFaultClass& fault, std::string_view detail) {
  add(at, EventKind::Fault, detail, node, gpu, code, fault.name, 1.0);
  add(at, EventKind::Interrupted, {}, node, gpu, code, fault.name, 1.0);
  if (fault.rolls_back()) add(at, EventKind::Rollback, {}, node, -1, -1, fault.name, 1.0);
}

}  // namespace ctwin::live
