// Step-time CSV logs (node, duration_s, step, stage, role).
#include "calibration/readers/step_log.hpp"
#include "trace_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return ctwin::calib::read_step_csv(in, "fuzz.csv"); });
}
