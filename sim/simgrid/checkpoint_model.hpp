#pragma once
//! The physical model of checkpoint I/O: how long a blocking save to storage and a restore take
//! for a given number of writers and shard size, from SimGrid flows and disk I/O with fair sharing.
//! Answers are cached by question, so a run (or a sweep) asks SimGrid once per storage state.

#include <string>

#include "models/scenario.hpp"

namespace ctwin {

struct StorageQuestion {
  int writers = 0;                  //!< nodes writing at once (the job's nodes)
  double shard_bytes = 0;           //!< per writer: size per GPU x GPUs per node
  double node_link_bytes_per_s = 0;
  int servers = 1;
  double server_link_bytes_per_s = 0;
  double disk_write_bytes_per_s = 0;
  double disk_read_bytes_per_s = 0;

  static StorageQuestion from(const Scenario& scenario);
  std::string signature() const;
};

struct StorageCosts {
  double save_s = 0;     //!< until the last writer's data is on disk
  double restore_s = 0;  //!< until the last reader has its shard back
};

//! Each writer streams its shard to server (writer mod servers) in chunks, the disk write of one
//! chunk overlapping the transfer of the next; restore reads and sends back the same way.
StorageCosts storage_costs(const StorageQuestion& question);

}  // namespace ctwin
