// Incident tables (class, count, exposure, unit, effect, source).
#include "calibration/readers/incident_table.hpp"
#include "trace_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return ctwin::calib::read_incident_table(in, "fuzz.csv"); });
}
