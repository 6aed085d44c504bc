#pragma once
//! Files ctwin ships (scenarios, the population prior): from the working directory, else beside an
//! installed ctwin (PREFIX/bin/ctwin -> PREFIX/share/ctwin/...), else from the source tree it was
//! built from. Only the `ctwin` target defines CTWIN_SOURCE_DIR.

#include <filesystem>
#include <string>

#ifndef CTWIN_SOURCE_DIR
#define CTWIN_SOURCE_DIR "."
#endif

namespace ctwin::cli {

//! `relative`, e.g. "scenarios/default.json", where it is found first.
inline std::string shipped_file(const std::string& relative) {
  namespace fs = std::filesystem;
  const fs::path here = relative;
  if (fs::exists(here)) return here.string();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "ctwin" / relative;
    if (fs::exists(installed, ec)) return installed.string();
  }
  return (fs::path(CTWIN_SOURCE_DIR) / relative).string();
}

//! The population prior calibrate pools a fleet's counts with unless told otherwise.
inline constexpr const char* kShippedPrior = "scenarios/priors/public_fleets.json";

}  // namespace ctwin::cli
