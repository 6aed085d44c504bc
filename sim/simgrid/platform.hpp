#pragma once
//! The SimGrid platform of a scenario: one host per node (job nodes, then spares), storage servers
//! with disks, and a control host for the job master. v1 connects them as a star: each node has
//! its own link to storage (the checkpoint persist bandwidth), each server its network link.
//! Only files under sim/simgrid include SimGrid headers (they take seconds to compile).

#include <vector>

namespace simgrid::s4u {
class Host;
class Disk;
class Link;
}  // namespace simgrid::s4u

namespace ctwin {

struct PlatformSpec {
  int nodes = 0;
  double node_link_bytes_per_s = 0;
  int storage_servers = 0;
  double server_link_bytes_per_s = 0;
  double disk_read_bytes_per_s = 0;
  double disk_write_bytes_per_s = 0;
  std::vector<double> node_speed_factors{1.0};  //!< pstates: full speed first, then each slow factor
};

struct Platform {
  std::vector<simgrid::s4u::Host*> nodes;
  std::vector<simgrid::s4u::Host*> storage;
  std::vector<simgrid::s4u::Disk*> disks;
  simgrid::s4u::Host* control = nullptr;
  // From the topology graph only: the links a failed part takes down.
  std::vector<std::vector<simgrid::s4u::Link*>> leaf_links, spine_links, cable_links;
};

class Topology;

//! Creates this process's engine, with the network model set so a flow takes size/bandwidth +
//! latency (SimGrid 3.32's default model runs about 8.5% slow and caps flows on long routes).
//! Call once per process, in a child (subprocess.hpp).
void init_simgrid_engine();
Platform build_platform(const PlatformSpec& spec);
//! The platform generated from the topology graph: a host per node, a router per leaf and spine
//! switch, a link per NIC cable and per uplink, storage servers on the spines (routes by Dijkstra).
//! `spec` gives the pstates, the storage and the nodes to create (job and spares).
Platform build_platform(const Topology& topology, const PlatformSpec& spec);

}  // namespace ctwin
