// Kernel logs (dmesg, dmesg -T, syslog, journal ISO): Xid lines with their timestamps and hosts.
#include "calibration/readers/xid_log.hpp"
#include "core/kernel_log.hpp"
#include "trace_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_trace(data, size, [](std::istream& in) { return ctwin::calib::read_xid_log(in, "fuzz.log", "", 2024); });
}
