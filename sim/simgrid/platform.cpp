#include "sim/simgrid/platform.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

namespace ctwin {

void init_simgrid_engine(bool many_actors) {
  xbt_log_control_set("root.thres:critical");
  // Guard pages cost a memory mapping per actor: 100k-GPU collective phases need them off.
  static int argc = 7;
  static char arg0[] = "ctwin", arg1[] = "--cfg=network/model:CM02", arg2[] = "--cfg=network/crosstraffic:0",
              arg3[] = "--cfg=network/TCP-gamma:0", arg4[] = "--cfg=contexts/stack-size:256",
              arg5[] = "--log=root.thres:critical", arg6[] = "--cfg=contexts/guard-size:0";
  static char* argv[] = {arg0, arg1, arg2, arg3, arg4, arg5, many_actors ? arg6 : nullptr, nullptr};
  if (!many_actors) argc = 6;
  static sg4::Engine engine(&argc, argv);
}

}  // namespace ctwin
