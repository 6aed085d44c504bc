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
//! A time on the system clock (a file's mtime, a worker's stamp) on the monotonic clock, both clocks
//! read together: a steady time taken earlier (before a kill, a file read) beside the system clock
//! read now would date it early by the gap, and blame the node whose agent was slower.
inline std::chrono::steady_clock::time_point on_steady_clock(std::chrono::system_clock::time_point at) {
  const auto steady_now = std::chrono::steady_clock::now();
  const auto ago = std::chrono::system_clock::now() - at;
  return steady_now - std::chrono::duration_cast<std::chrono::steady_clock::duration>(ago);
}
//! `s` seconds as a monotonic clock's duration (a timeout read from options in seconds).
inline std::chrono::steady_clock::duration steady_seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}
//! Seconds since `t0` on the monotonic clock.
inline double seconds_since(std::chrono::steady_clock::time_point t0) { return seconds_between(t0, std::chrono::steady_clock::now()); }

}  // namespace ctwin
