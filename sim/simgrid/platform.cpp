#include "sim/simgrid/platform.hpp"

#include <string>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

namespace ctwin {

void init_simgrid_engine() {
  xbt_log_control_set("root.thres:critical");
  static int argc = 6;
  static char arg0[] = "ctwin", arg1[] = "--cfg=network/model:CM02", arg2[] = "--cfg=network/crosstraffic:0",
              arg3[] = "--cfg=network/TCP-gamma:0", arg4[] = "--cfg=contexts/stack-size:256",
              arg5[] = "--log=root.thres:critical";
  static char* argv[] = {arg0, arg1, arg2, arg3, arg4, arg5, nullptr};
  static sg4::Engine engine(&argc, argv);
}

Platform build_platform(const PlatformSpec& spec) {
  Platform p;
  auto* zone = sg4::create_star_zone("cluster");
  auto attach = [zone](sg4::Host* host, double bytes_per_s) {
    const sg4::Link* link =
        zone->create_split_duplex_link(host->get_name() + "-link", bytes_per_s)->set_latency(1e-6)->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
  };
  p.nodes.reserve(static_cast<std::size_t>(spec.nodes));
  for (int i = 0; i < spec.nodes; ++i) {
    sg4::Host* host = zone->create_host("node-" + std::to_string(i), spec.node_speed_factors)->seal();
    attach(host, spec.node_link_bytes_per_s > 0 ? spec.node_link_bytes_per_s : 1e12);
    p.nodes.push_back(host);
  }
  for (int i = 0; i < spec.storage_servers; ++i) {
    sg4::Host* host = zone->create_host("storage-" + std::to_string(i), 1.0);
    p.disks.push_back(host->create_disk("disk", spec.disk_read_bytes_per_s, spec.disk_write_bytes_per_s)->seal());
    host->seal();
    attach(host, spec.server_link_bytes_per_s);
    p.storage.push_back(host);
  }
  p.control = zone->create_host("control", 1.0)->seal();
  attach(p.control, 1e12);
  zone->seal();
  return p;
}

}  // namespace ctwin
