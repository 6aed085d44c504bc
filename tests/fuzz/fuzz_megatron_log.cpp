// Megatron-LM training logs: "iteration N/ M | ... elapsed time per iteration (ms): X |".
#include "calibration/readers/step_log.hpp"
#include "core/step_lines.hpp"
#include "trace_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)ctwin::parse_step_line(std::string_view(reinterpret_cast<const char*>(data), size));  // tqdm bars too
  return fuzz_trace(data, size, [](std::istream& in) { return ctwin::calib::read_megatron_log(in, "fuzz.log"); });
}
