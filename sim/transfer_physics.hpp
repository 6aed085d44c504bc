#pragma once
//! The native engine's answer to "what does moving this checkpoint cost now": closed forms over the
//! storage path (models/storage_path.hpp), fast enough to ask at every change of state.
//!
//! Each mover sends its shard in equal chunks; a chunk's disk I/O overlaps the next chunk's
//! transfer. The movers are dealt to servers in turn, and the busiest server (ceil(movers /
//! servers) writers) sets the time. Every stage is shared fairly by the movers that cross it, so a
//! mover's network rate is the least of its node link, its share of its group's live uplinks (with
//! a topology) and its share of the server's link, and its disk rate its share of the server's
//! disks: T = t_net + t_disk + (chunks - 1) max(t_net, t_disk) for one chunk's times.
//!
//! A peer copy (a flash snapshot's replica, or a lost node pulling its shard back) moves the shard
//! over the node's link to a peer in another leaf group, sharing the group's live uplinks.
//!
//! A persist or a replica beside training (storage on the compute fabric): during the step's data-parallel
//! reduction both share the node link; the reduction gets what the persist leaves, and at least
//! half. The transfer's own slowdown is not modelled here: SimGrid's answer has it, and `ctwin run
//! --engine both` reports the difference.

#include "models/storage_path.hpp"
#include "trial/physics.hpp"

namespace ctwin {

TransferCost analytic_transfer(const StoragePath& path, const TransferQuestion& question);

class AnalyticPhysics final : public Physics {
 public:
  explicit AnalyticPhysics(StoragePath path) : path_(std::move(path)) {}
  TransferCost cost(const TransferQuestion& question) const override { return analytic_transfer(path_, question); }
  const char* name() const override { return "analytic"; }

 private:
  StoragePath path_;
};

}  // namespace ctwin
