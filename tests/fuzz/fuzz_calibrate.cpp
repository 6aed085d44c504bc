// `ctwin calibrate` end to end (issue 37): arbitrary bytes as one trace, its kind told by its first
// line, through every reader, fit and writer to a calibrated scenario, which calibrate itself loads
// back. Bad input is refused (BadInput: exit 2); anything else is a finding, a calibrated scenario
// that does not load (std::logic_error, "internal error") above all.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "calibration/calibrate.hpp"
#include "core/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("ctwin-fuzz-calibrate-" + std::to_string(::getpid()) + ".trace")).string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    ctwin::calib::calibrate({path}, ctwin::calib::CalibrateOptions{});
  } catch (const ctwin::BadInput&) {
  }
  return 0;
}
