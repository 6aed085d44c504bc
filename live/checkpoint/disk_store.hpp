#pragma once
//! Checkpoints on disk: `<dir>/step-<012 step>/rank-<05 rank>.shard` holds a rank's payload as in
//! its shared-memory slot, and `rank-<05 rank>.manifest` names each buffer with its offset, size
//! and CRC-32C. Both are written to a temporary name, fsynced and renamed, the manifest last, and
//! the folder fsynced: a manifest exists only for a shard that is whole. A step is complete when
//! every rank's manifest is there and all name one job generation: a restart from an older step
//! forks a new timeline, and a rank's shard of a later step from the abandoned one (it trained on
//! after its peer died, or was stopped late) must not complete that step with the new timeline's
//! shards, nor make retention drop the step the new generation restores before every rank has
//! read it. The last K complete steps are kept, and no incomplete step older than the newest
//! complete one (it never will be: a rank that crashed mid-save).
//!
//! One shard per replica: when data-parallel replicas hold the same state, only the first replica's
//! ranks persist (a step has `world` = ranks per replica shards, `replicas` copies of it in memory);
//! rank r of the job restores shard r mod world. The others keep their snapshot in memory only.
//!
//! Manifest (text, one record per line):
//!   ctwin-flash-manifest 2 / step S / rank R / world W / [replicas K, when more than 1] /
//!   generation G (version 1 had none: 0) / layout HASH /
//!   shard FILE BYTES / buffer NAME OFFSET BYTES CRC32C [DESCRIPTION] (one per buffer; e.g.
//!   "dtype=float32 shape=64,32") / end

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "live/checkpoint/shm_slot.hpp"

namespace ctwin::flash {

struct Manifest {
  std::int64_t step = -1;
  int rank = 0;
  int world = 1;     //!< the shards of the step: the ranks that persisted it
  int replicas = 1;  //!< the job that saved it ran world x replicas ranks
  int generation = 0;  //!< the job generation whose timeline the shard is on (SlotSummary::generation)
  std::uint64_t layout_hash = 0;
  std::string shard_file;
  std::uint64_t shard_bytes = 0;
  struct Buffer {
    std::string name;
    std::uint64_t offset = 0, bytes = 0;
    std::uint32_t crc = 0;
    std::string description;  //!< the rest of its line: what the bytes are (dtype, shape), when the trainer said
  };
  std::vector<Buffer> buffers;
};

//! The mode of checkpoint files: 0600 (the owner's alone), or $CTWIN_FLASH_FILE_MODE (octal, e.g.
//! 0640 for a group that reads them); a value that is not a mode from 0600 to 0666 is a usage error.
mode_t checkpoint_file_mode();

class DiskStore {
 public:
  //! A step restores here when it was saved by a job of `world` ranks (one shard per rank, or one
  //! per replica), and it is complete when each of its shards is there; this rank reads shard
  //! (rank mod the step's shards). `replicated`: every data-parallel replica holds the same state
  //! (plain DDP), so a step saved at any world size restores. Elastic jobs shrink and regrow so.
  //! `replica_ranks` (0: `world`): the ranks of a replica when this job persists one shard per
  //! replica; a rank past them persists nothing, and its pruning is done by the rank it mirrors.
  DiskStore(std::string dir, int rank, int world, int keep_last, bool replicated = false, int replica_ranks = 0);

  //! Writes the complete slot (read under a shared lock by the caller) as step `step`, with the
  //! world and replicas the slot records; then prunes. Throws FlashError(Persist) naming the file;
  //! nothing of the failed step is left behind. A slot of a rank that does not persist is a usage error.
  void persist(const ShmSlot& slot, std::int64_t step);
  //! The disk is full: this rank's files of every step older than the newest complete one go (the
  //! one a restore needs stays), and of the steps newer than it all but the newest keep_last (a rank
  //! behind may still complete those), to make room for the next.
  void prune_for_space() const;
  //! Steps complete for every rank (their manifests all there, of one generation), newest first.
  //! Reads the head of each rank's manifest of each step: a small read a rank, where a stat was.
  std::vector<std::int64_t> complete_steps() const;
  //! Whether `step` is complete for every rank now (complete_steps' test of one step).
  bool complete(std::int64_t step) const;
  //! This rank's manifest of `step`; nullopt when missing or malformed.
  std::optional<Manifest> manifest(std::int64_t step) const;
  //! Reads this rank's shard of `step` into `payload` (at least shard_bytes) and checks every
  //! buffer's checksum: false (with `why`) on a short file or a mismatch.
  bool load(const Manifest& m, unsigned char* payload, std::uint64_t capacity, std::string& why) const;
  //! Checks this rank's shard of `m.step` against its manifest without keeping it (read in chunks):
  //! false (with `why`, naming the shard and the buffer) on a short file or a mismatch.
  bool verify(const Manifest& m, std::string& why) const;
  std::string shard_path(const Manifest& m) const { return step_dir(m.step) + "/" + m.shard_file; }
  const std::string& dir() const { return dir_; }

 private:
  std::string step_dir(std::int64_t step) const;
  std::string rank_file(std::int64_t step, const char* suffix, int rank) const;
  std::string rank_file(std::int64_t step, const char* suffix) const { return rank_file(step, suffix, rank_); }
  struct SavedWorld {
    int shards = 0, replicas = 1, generation = 0;
  };
  //! How step `step` was saved (from rank 0's manifest); shards 0 when unknown.
  SavedWorld saved_world(std::int64_t step) const;
  //! The shard this rank restores from `step`; -1 when the step is not this job's to restore.
  int source_rank(std::int64_t step) const;
  int source_rank(const SavedWorld& saved) const;
  //! Whether files named for `rank` are this rank's to prune: its own, and those of ranks mirroring it.
  bool prunes_for(int rank) const;
  void prune() const;
  std::string dir_;
  int rank_, world_, keep_last_;
  bool replicated_ = false;
  int replica_ranks_;
};

}  // namespace ctwin::flash
