#include "core/invariant.hpp"

namespace ctwin {

void invariant_broken(const char* invariant, const char* condition, const char* file, int line, const std::string& detail) {
  // The path from the floor's folder on (the rightmost one in it), not the build machine's.
  std::string where = file;
  std::size_t from = std::string::npos;
  for (const char* floor : {"/core/", "/models/", "/policies/", "/trial/", "/sim/", "/report/", "/live/", "/calibration/", "/cli/"}) {
    const auto at = where.rfind(floor);
    if (at != std::string::npos && (from == std::string::npos || at > from)) from = at;
  }
  if (from != std::string::npos) where = where.substr(from + 1);
  std::string message = std::string("invariant broken: ") + invariant + " (" + condition + ", " + where + ":" + std::to_string(line) + ")";
  if (!detail.empty()) message += ": " + detail;
  throw InvariantBroken(message + "; this is a bug in ctwin, not in the input");
}

}  // namespace ctwin
