#pragma once
//! The path a checkpoint's bytes take between the job's nodes and storage, as data: each node's
//! link to storage, the uplinks its leaf group shares, the storage servers' links and disks, and
//! the job's own traffic on the node link (when storage shares the compute fabric).
//! sim/ answers what moving shards along it costs: in closed form for the native engine, as
//! SimGrid flows and disk I/O for the SimGrid engine.
//!
//! Without a `cluster.topology`, storage is a network of its own (a frontend): nodes reach the
//! servers through their storage link only, and training traffic never meets a checkpoint. With a
//! topology, checkpoints cross the compute fabric: a leaf group's nodes share its uplinks (one share
//! per spine), and the node link a persist uses also carries the node's share of the step's traffic
//! across the scale-out fabric (data-parallel, and pipeline and context transfers between nodes).

#include <string>

#include "models/scenario.hpp"

namespace ctwin {

struct StoragePath {
  double shard_bytes = 0;             //!< one node's part of a checkpoint
  double node_bytes_per_s = 0;        //!< a node's link to storage
  double degraded_node_bytes_per_s = 0;  //!< the same for a node that lost one rail (0: unknown, as healthy)
  int group_nodes = 0;                //!< nodes behind one leaf group's uplinks (0: a storage network of its own)
  double group_uplink_bytes_per_s = 0;  //!< those uplinks together, every spine up
  int spines = 1;                     //!< a spine down takes 1/spines of every group's uplinks
  int group_rails = 0;                //!< rail leaves in a group (rail-optimized; 0: one ToR leaf): one down takes 1/rails of its uplinks
  //! A node's link to a peer's memory (a flash snapshot's replica): its compute NICs with a topology,
  //! else its one link. Peers sit in another leaf group, so with a topology replicas cross the uplinks.
  double peer_bytes_per_s = 0;
  double degraded_peer_bytes_per_s = 0;  //!< the same for a node that lost one rail (0: as healthy)
  int servers = 1;
  double server_bytes_per_s = 0;      //!< each server's network link
  double disk_write_bytes_per_s = 0;  //!< each server's disks
  double disk_read_bytes_per_s = 0;
  int chunks = 8;                     //!< a shard moves in equal chunks: the network and the disk overlap
  double link_latency_s = 1e-6;       //!< a node's link and a storage link (the uplinks add none)
  // The job's traffic each step on the node link (a topology only; 0: none).
  double step_s = 0;
  double traffic_s = 0;          //!< the time it holds the link, at the link's full rate
  double traffic_exposed_s = 0;  //!< the part not hidden behind compute

  static StoragePath from(const Scenario& scenario);
  bool shares_fabric() const { return group_nodes > 0; }
  //! A leaf group's uplinks with some spines and some of its rail leaves out.
  double live_uplink_bytes_per_s(int spines_down, int rail_leaves_down) const;
  bool has_training_traffic() const { return shares_fabric() && traffic_s > 0 && step_s > 0; }
  //! Everything that changes an answer, and the model's version.
  std::string signature() const;
};

}  // namespace ctwin
