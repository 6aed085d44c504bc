// Slurm accounting records (sacct --parsable2), host lists included.
#include "calibration/readers/slurm_sacct.hpp"
#include "trace_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The host-list syntax on its own too: counted before it is expanded.
  (void)ctwin::calib::expand_hostlist(std::string(reinterpret_cast<const char*>(data), size), 100'000);
  return fuzz_trace(data, size, [](std::istream& in) { return ctwin::calib::read_sacct(in, "fuzz.sacct"); });
}
