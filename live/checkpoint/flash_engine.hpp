#pragma once
//! The flash checkpoint engine (DLRover's Flash Checkpoint, in C++): `save(step)` copies the
//! registered buffers (GPU or host memory) into a shared-memory slot and returns; a persister
//! writes the snapshot to disk in the background; `restore()` takes the newest complete snapshot
//! from shared memory, else the newest complete and checksum-verified one on disk.
//!
//! Crash consistency: a rank keeps two slots and writes the one not holding its newest complete
//! snapshot; shards and manifests on disk appear by rename only. A process killed at any point
//! leaves the previous checkpoint restorable. Standard library only (plus the CUDA plugin, loaded
//! at run time, for GPU buffers), so that it builds on a bare GPU machine.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "live/checkpoint/disk_store.hpp"
#include "live/checkpoint/shm_slot.hpp"

struct ctwin_backend_v1;

namespace ctwin::flash {

struct EngineOptions {
  std::string name;                 //!< names the job's slots: a restarted trainer must use the same
  std::string persist_dir;          //!< empty: memory only
  std::string shm_dir = "/dev/shm";
  int rank = 0, world = 1;
  int keep_last = 2;                //!< complete checkpoints kept on disk
  bool persist_in_background = true;
  //! Data-parallel replicas hold the same state: a step saved at another world size restores
  //! (DiskStore). Also set by $CTWIN_FLASH_REPLICATED=1, which an elastic job's agent exports.
  bool replicated = false;
  //! One shard per replica: the ranks of one data-parallel replica (tensor x pipeline x context
  //! parallel), with ranks numbered replica by replica, when every replica holds the same state.
  //! Only ranks below it persist; the others keep their snapshots in memory and restore from disk
  //! their replica-mate's shard (rank mod replica_ranks), which needs a persist folder every node
  //! sees. 0: every rank persists its own ($CTWIN_FLASH_REPLICA_RANKS, when set, gives it).
  int replica_ranks = 0;
};

struct SaveStats {
  double seconds = 0;          //!< the trainer's stall: waiting for the slot, then copying
  double seconds_waiting = 0;  //!< of which waiting for a persister still reading the slot
  std::uint64_t bytes = 0;
};

enum class RestoreSource { None, Memory, Disk };

struct Restored {
  std::int64_t step = -1;
  RestoreSource source = RestoreSource::None;
  double seconds = 0;
  std::vector<std::string> skipped;  //!< newer checkpoints passed over, and why
};

class Engine {
 public:
  explicit Engine(EngineOptions options);
  ~Engine();  //!< finishes the pending persist, then stops
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  //! `device` -1: host memory; else the CUDA device holding `ptr` (copies through the plugin).
  //! `description`: what the bytes are ("dtype=float32 shape=64,32"), kept in every manifest so that
  //! a checkpoint on disk describes itself.
  void register_buffer(const std::string& name, void* ptr, std::uint64_t bytes, int device = -1, const std::string& description = {});
  SaveStats save(std::int64_t step);
  //! The steps this rank can restore, newest first: complete snapshots of this layout in its
  //! memory slots, and checkpoints complete for every rank on disk.
  std::vector<std::int64_t> restorable_steps();
  //! Of `mine` (this rank's restorable steps), those every rank can restore. A trainer computes
  //! it with its own collective (ctwin_flash.py gathers through torch.distributed).
  using StepAgreement = std::function<std::vector<std::int64_t>(const std::vector<std::int64_t>& mine)>;
  //! The job generation this engine's saves belong to: $CTWIN_GENERATION (0 when unset), read at
  //! the open and again at every restore, where a timeline begins (an in-process restart sets it
  //! before restoring). Shards of one step from two generations never make it complete (DiskStore).
  int generation() const { return generation_; }
  //! Restores the newest step that every rank can restore, so that ranks never resume from
  //! different steps: one rank may hold a newer snapshot in memory than another that died before
  //! saving it. Without `agree`, ranks are compared through the slots this host sees in shm_dir;
  //! a rank whose slots are not here (another host) counts with the disk's steps only.
  Restored restore(const StepAgreement& agree = {});
  //! Restores exactly `step`: from memory when a slot holds it, else from disk; `step` -1 in the
  //! result (with the reason in `skipped`) when neither holds it whole. The job goes on from `step`:
  //! this rank's snapshots of newer steps are emptied (an abandoned timeline's). `step` -1: from
  //! scratch; every snapshot goes, nothing is restored.
  Restored restore_step(std::int64_t step);
  //! True once `step` (or a newer one) is on disk; false on timeout. Throws the persist error
  //! when writing it failed.
  bool wait_persisted(std::int64_t step, double timeout_s);
  std::int64_t persisted_step() const;
  std::string persist_error() const;
  //! Whether the background persister's last attempt failed (a full disk, a quota, an I/O error):
  //! the snapshots stay in memory, and it tries again on a backoff (1 s doubling to 30 s) and at
  //! each save; a full disk first loses every step older than the newest complete one.
  struct PersistHealth {
    bool failing = false;
    std::int64_t failed_step = -1, persisted_step = -1;
    std::string error;  //!< while failing
  };
  PersistHealth persist_health() const;
  const EngineOptions& options() const { return options_; }

  //! Persists the newest complete snapshot in `slots` newer than `after`: its step, or nullopt when
  //! there is none. The background persister calls this, and so can an agent in another process
  //! (the supervisor, after the trainer crashed between save and persist).
  static std::optional<std::int64_t> persist_newest(const SlotLocation& slots, DiskStore& store, std::int64_t after);

 private:
  struct Registered {
    std::string name;
    void* ptr;
    std::uint64_t bytes;
    int device;
    std::string description;
  };
  void ensure_slots();
  int newest_slot(const std::vector<ShmSlot*>& slots) const;
  std::vector<std::int64_t> steps_every_local_rank_has(const std::vector<std::int64_t>& mine,
                                                        const std::vector<std::int64_t>& on_disk) const;
  void copy_out(const ShmSlot& slot);  //!< slot -> registered buffers
  //! Empties this rank's slots holding a step newer than `step`, the one being restored: they are of
  //! the timeline the restore abandons, and must neither outlive the restored snapshot at the next
  //! save (which overwrites the older slot) nor be persisted as the newest.
  void discard_newer_than(std::int64_t step);
  void persist_loop();
  const ctwin_backend_v1* device_copies() const;

  EngineOptions options_;
  SlotLocation location_;
  std::vector<Registered> buffers_;
  Layout layout_;
  ShmSlot slots_[2];
  bool slots_pinned_ = false;
  int generation_ = 0;
  std::int64_t hold_save_at_ = -1;  //!< $CTWIN_FLASH_INJECT (tests): the first save from this step on waits, its slot Writing
  std::optional<DiskStore> store_;
  bool persists_ = true;  //!< this rank's shard goes to disk (not a replica-mate's)

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool pending_ = false, stopping_ = false, failing_ = false;
  std::int64_t persisted_step_ = -1, failed_step_ = -1;
  std::int64_t saved_step_ = -1;  //!< the newest step this engine saved for its persister
  std::uint64_t timeline_ = 0;    //!< one more at each restore: a persist begun before one counts for nothing
  std::string persist_error_;
  std::thread persister_;
};

}  // namespace ctwin::flash
