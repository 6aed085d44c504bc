// ctwin's event logs (docs/event-log.md), as `calibrate` and `validate` read them.
#include "core/event_log.hpp"
#include "trace_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return ctwin::read_event_log(in, "fuzz.csv"); });
}
