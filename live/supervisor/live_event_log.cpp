#include "live/supervisor/live_event_log.hpp"

#include <cstdio>

#include "core/atomic_file.hpp"

namespace ctwin::live {

void LiveEventLog::add(Micros time, const std::string& kind, int node, int gpu, int code, const std::string& detail) {
  std::string row = exact_seconds(time) + ',';
  if (node >= 0) row += "node-" + std::to_string(node);
  row += ',';
  if (gpu >= 0) row += std::to_string(gpu);
  row += ',' + kind + ',';
  if (code >= 0) row += std::to_string(code);
  // The detail is free text: keep it one CSV field.
  std::string clean = detail;
  for (char& c : clean)
    if (c == ',' || c == '\n' || c == '"') c = ' ';
  rows_.push_back(row + ',' + clean);
  dirty_ = true;
}

void LiveEventLog::flush(bool force) {
  if (path_.empty() || !dirty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - written_ < std::chrono::seconds(1)) return;
  std::string text = "time_s,node,gpu,kind,code,detail\n";
  for (const auto& r : rows_) text += r + '\n';
  write_file_atomically(path_, text);
  written_ = now;
  dirty_ = false;
}

void LiveEventLog::close(Micros wall, const Ledger& ledger) {
  add(wall, "end");
  for (std::size_t c = 0; c < kCategoryCount; ++c)
    add(wall, "ledger", -1, -1, -1, std::string(kCategoryKeys[c]) + '=' + exact_seconds(ledger.us[c]));
  flush(true);
}

}  // namespace ctwin::live
