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
  mutable std::map<std::string, TransferCost> memory_;
  mutable int simulated_ = 0, read_from_disk_ = 0;
};

}  // namespace ctwin
