#pragma once
// One trace reader on arbitrary bytes: it returns records and malformed lines, or refuses the file
// as bad input (TraceUnreadable, exit 2) when nothing parses. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "core/text_records.hpp"

template <class Read>
int fuzz_trace(const std::uint8_t* data, std::size_t size, Read&& read) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    read(in).report.require_some();
  } catch (const ctwin::TraceUnreadable&) {
  }
  return 0;
}
