#include "trial/physics.hpp"

#include <cstdio>

namespace ctwin {

std::string TransferQuestion::signature() const {
  static const char* const kinds[] = {"save", "persist", "restore", "replicate", "peer-restore"};
  char text[160];
  std::snprintf(text, sizeof text, "%s movers=%d spines_down=%d contention=%d degraded=%d rail_leaves_down=%d", kinds[static_cast<int>(what)],
                movers, spines_down, contention ? 1 : 0, degraded_movers, rail_leaves_down);
  return text;
}

}  // namespace ctwin
