#pragma once
//! The wall clock, for the rows that line a live log up with dmesg, sacct and Grafana.

#include <chrono>
#include <cstdint>
#include <string>

namespace ctwin {

//! Microseconds since the Unix epoch, now.
std::int64_t utc_now_us();
//! "2026-11-24T08:36:06.123456Z".
std::string utc_text(std::int64_t us_since_epoch);

//! Seconds from `a` to `b` on the monotonic clock (the live side's timeouts and intervals).
inline double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
//! Seconds since `t0` on the monotonic clock.
inline double seconds_since(std::chrono::steady_clock::time_point t0) { return seconds_between(t0, std::chrono::steady_clock::now()); }

}  // namespace ctwin
