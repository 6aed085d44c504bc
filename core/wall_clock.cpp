#include "core/wall_clock.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace ctwin {

std::int64_t utc_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string utc_text(std::int64_t us) {
  const std::time_t seconds = static_cast<std::time_t>(us / 1'000'000);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                parts.tm_hour, parts.tm_min, parts.tm_sec, static_cast<long long>(us % 1'000'000));
  return text;
}

}  // namespace ctwin
