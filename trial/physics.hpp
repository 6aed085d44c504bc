#pragma once
//! What moving a checkpoint costs in the state the trial is in: the question the trial asks its
//! engine each time that state changes (a start, a shrink or regrowth, a spine or a rail leaf out
//! or back, a node on fewer rails, a restore that needs storage or a peer). The native engine answers in closed form (sim/transfer_physics);
//! the SimGrid engine runs the transfer, and what runs beside it, as flows and disk I/O on the
//! scenario's fabric (sim/simgrid/fabric_physics). Their difference is the native engine's
//! approximation error, which `ctwin run --engine both` reports.

#include <cstdint>
#include <string>

#include "core/units.hpp"

namespace ctwin {

enum class Transfer : std::uint8_t {
  Save,     //!< a blocking save to storage: the job waits
  Persist,  //!< a flash snapshot persisted in the background: the job trains meanwhile
  Restore,  //!< shards read back from storage
  Replicate,    //!< each mover copies its snapshot to a peer's memory in another leaf group, training beside
  PeerRestore,  //!< each mover (a node that lost its memory) pulls its shard back from its peer
};

struct TransferQuestion {
  Transfer what = Transfer::Save;
  int movers = 0;           //!< nodes each moving one shard
  int spines_down = 0;      //!< spines out: every leaf group's uplinks are narrower
  bool contention = true;   //!< a persist shares the links with the job's data-parallel traffic
  int degraded_movers = 0;  //!< movers that lost a rail (a cable or a rail leaf out): a narrower node link
  int rail_leaves_down = 0; //!< rail leaves out (assumed in one leaf group): that group's uplinks are narrower
  auto operator<=>(const TransferQuestion&) const = default;
  std::string signature() const;
};

struct TransferCost {
  Micros us = 0;               //!< until the last mover is done
  double training_speed = 1;   //!< the job's speed while a persist runs (1: untouched)
};

//! Answers must be deterministic, and safe to ask from several threads at once.
class Physics {
 public:
  virtual ~Physics() = default;
  virtual TransferCost cost(const TransferQuestion& question) const = 0;
  virtual const char* name() const = 0;
};

}  // namespace ctwin
