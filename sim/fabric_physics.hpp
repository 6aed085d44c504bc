#pragma once
//! The SimGrid engine's physics: every question the trial asks is run on the fabric
//! (sim/simgrid/transfer_fabric.hpp) the first time, then answered from memory and from disk.
//! The answer is what SimGrid computed for that state (who moves, which spines are out, whether
//! training runs beside it), never one computed for an idle platform and replayed.

#include <map>
#include <mutex>
#include <string>

#include "models/storage_path.hpp"
#include "sim/disk_memo.hpp"
#include "trial/physics.hpp"

namespace ctwin {

//! The question SimGrid is asked for `question`: the smallest one whose slice of the platform
//! (sim/simgrid/transfer_fabric.cpp: a leaf group's movers, the busiest server's share, the
//! movers that lost a rail among them, the uplinks when storage shares the fabric, training
//! beside a background transfer) is the same, so that states alike on the fabric share one
//! simulation (2,048 movers with 40 or 64 of them on a rail short: the same 32-node slice).
TransferQuestion slice_question(const StoragePath& path, const TransferQuestion& question);

class FabricPhysics final : public Physics {
 public:
  explicit FabricPhysics(StoragePath path, std::string cache_directory = default_cache_directory());
  TransferCost cost(const TransferQuestion& question) const override;
  const char* name() const override { return "simgrid"; }
  int simulated() const;
  int read_from_disk() const;

 private:
  StoragePath path_;
  std::string path_signature_;
  DiskMemo disk_;
  mutable std::mutex mutex_;
  mutable std::map<TransferQuestion, TransferCost> memory_;  //!< by the slice's question
  mutable int simulated_ = 0, read_from_disk_ = 0;
};

}  // namespace ctwin
