#pragma once
//! A checkpoint transfer run on the fabric, in a forked SimGrid process: the SimGrid engine's answer
//! to the trial's question (trial/physics.hpp).
//!
//! The movers are symmetric, so one slice of the cluster is simulated: without a topology, the
//! busiest storage server and its ceil(movers / servers) writers; with one, a leaf group's movers,
//! their shared uplinks (the live spines' share) and, of the servers' links and disks, what as many
//! writers of the busiest server get (the movers are dealt to servers in turn). Each mover streams
//! its shard in chunks, a chunk's disk I/O overlapping the next chunk's transfer. A peer copy (a
//! replica, or a lost node's restore from its peer) pairs each mover with a peer in another leaf
//! group, behind that group's live uplinks. A persist or a replica beside training also runs the
//! job: each mover's node computes, then sends its step's data-parallel reduction to its ring
//! neighbour over the node link the transfer uses (the hidden part beside backward compute), step
//! after step until the transfer is done. The training it lost is measured, not assumed: the steps
//! it finished against the healthy step.

#include "models/storage_path.hpp"
#include "trial/physics.hpp"

namespace ctwin {

TransferCost simulate_transfer(const StoragePath& path, const TransferQuestion& question);

}  // namespace ctwin
