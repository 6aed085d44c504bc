#include "models/storage_path.hpp"

#include <algorithm>
#include <cstdio>

namespace ctwin {

StoragePath StoragePath::from(const Scenario& s) {
  StoragePath p;
  p.shard_bytes = s.checkpoint.size_per_gpu_bytes.value_or(0) * s.cluster.gpus_per_node;
  p.node_bytes_per_s = s.checkpoint.persist_bytes_per_s > 0 ? s.checkpoint.persist_bytes_per_s : 1e12;
  p.peer_bytes_per_s = p.node_bytes_per_s;
  const StorageSystem& st = s.cluster.storage;
  p.servers = std::max(1, st.servers);
  p.server_bytes_per_s = st.network_bytes_per_s > 0 ? st.network_bytes_per_s : 1e12;
  p.disk_write_bytes_per_s = st.write_bytes_per_s > 0 ? st.write_bytes_per_s : 1e12;
  p.disk_read_bytes_per_s = st.read_bytes_per_s > 0 ? st.read_bytes_per_s : 1e12;
  if (const auto& t = s.cluster.topology) {
    // A ToR leaf serves a rack; a rail-optimized unit's rail leaves together serve its nodes.
    p.group_nodes = t->shape == TopologyShape::TorFatTree ? t->nodes_per_rack : t->nodes_per_unit;
    p.group_uplink_bytes_per_s = p.group_nodes * t->nics_per_node * t->nic_bytes_per_s / std::max(1e-9, t->oversubscription);
    p.spines = std::max(1, t->spines);
    if (t->shape == TopologyShape::RailOptimized) p.group_rails = t->nics_per_node;
    p.node_bytes_per_s = std::min(p.node_bytes_per_s, t->nics_per_node * t->nic_bytes_per_s);
    // A node on one NIC has no rail to lose: losing it takes the node out of the job.
    if (t->nics_per_node > 1) p.degraded_node_bytes_per_s = std::min(p.node_bytes_per_s, (t->nics_per_node - 1) * t->nic_bytes_per_s);
    // A peer is reached over the compute NICs, not through the storage client's limit.
    p.peer_bytes_per_s = t->nics_per_node * t->nic_bytes_per_s;
    if (t->nics_per_node > 1) p.degraded_peer_bytes_per_s = (t->nics_per_node - 1) * t->nic_bytes_per_s;
    p.step_s = micros_to_seconds(s.job.step_us);
    p.traffic_s = micros_to_seconds(s.job.traffic_us);
    p.traffic_exposed_s = std::min(p.traffic_s, micros_to_seconds(s.job.traffic_exposed_us));
  }
  return p;
}

double StoragePath::live_uplink_bytes_per_s(int spines_down, int rail_leaves_down) const {
  const int live_spines = std::max(1, spines - spines_down);
  double live = group_uplink_bytes_per_s * live_spines / spines;
  if (group_rails > 0) live *= static_cast<double>(std::max(1, group_rails - rail_leaves_down)) / group_rails;
  return live;
}

std::string StoragePath::signature() const {
  char text[1024];
  std::snprintf(text, sizeof text,
                "storage-path-v7 shard=%a node=%a degraded=%a peer=%a peer_degraded=%a group=%d uplink=%a spines=%d rails=%d servers=%d net=%a dw=%a dr=%a chunks=%d "
                "lat=%a step=%a traffic=%a exposed=%a",
                shard_bytes, node_bytes_per_s, degraded_node_bytes_per_s, peer_bytes_per_s, degraded_peer_bytes_per_s, group_nodes, group_uplink_bytes_per_s, spines, group_rails, servers, server_bytes_per_s,
                disk_write_bytes_per_s, disk_read_bytes_per_s, chunks, link_latency_s, step_s, traffic_s, traffic_exposed_s);
  return text;
}

}  // namespace ctwin
