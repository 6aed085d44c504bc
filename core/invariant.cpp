#include "core/invariant.hpp"

#include <cstring>

namespace ctwin {

void invariant_broken(const char* invariant, const char* condition, const char* file, int line, const std::string& detail) {
  // The path from the repository's root, not the build machine's.
  std::string where = file;
  for (const char* floor : {"/core/", "/models/", "/policies/", "/trial/", "/sim/", "/report/", "/live/", "/calibration/", "/cli/"}) {
    const auto at = where.rfind(floor);
    if (at != std::string::npos) {
      where = where.substr(at + 1);
      break;
    }
  }
  std::string message = std::string("invariant broken: ") + invariant + " (" + condition + ", " + where + ":" + std::to_string(line) + ")";
  if (!detail.empty()) message += ": " + detail;
  throw InvariantBroken(message + "; this is a bug in ctwin, not in the input");
}

}  // namespace ctwin
