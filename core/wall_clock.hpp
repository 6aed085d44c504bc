#pragma once
//! The wall clock, for the rows that line a live log up with dmesg, sacct and Grafana.

#include <cstdint>
#include <string>

namespace ctwin {

//! Microseconds since the Unix epoch, now.
std::int64_t utc_now_us();
//! "2026-11-24T08:36:06.123456Z".
std::string utc_text(std::int64_t us_since_epoch);

}  // namespace ctwin
