#pragma once
//! One snapshot slot in POSIX shared memory (a file under /dev/shm): a header page that says what
//! the slot holds, then the buffers. A rank has two slots and writes the one that does not hold its
//! newest complete snapshot, so a writer killed mid-copy leaves that snapshot intact. The header's
//! state goes Writing before the first byte is copied and Complete after the last; readers take
//! only Complete slots. Shared memory outlives the trainer process, so a restarted trainer (or the
//! supervisor) finds the snapshot there. flock() on the slot file keeps a persister reading a slot
//! and a writer overwriting it apart; the kernel drops the lock of a killed process.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ctwin::flash {

struct BufferSpec {
  std::string name;
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;  //!< in the payload; 4 KiB aligned
  //! What the bytes are, for a reader with nothing else (e.g. "dtype=float32 shape=64,32"); may be empty.
  std::string description;
};

inline constexpr std::size_t kLongestDescription = 95;

//! The buffers' names, sizes and payload offsets, in registration order.
struct Layout {
  std::vector<BufferSpec> buffers;
  std::uint64_t payload_bytes = 0;
  std::uint64_t hash = 0;  //!< FNV-1a over names, sizes and descriptions: slots and shards of another layout are not restored
  //! Offsets and the hash for `buffers` (their name, bytes and description).
  static Layout of(const std::vector<BufferSpec>& buffers);
};

enum class SlotState : std::uint32_t { Empty = 0, Writing = 1, Complete = 2 };

struct SlotSummary {
  SlotState state = SlotState::Empty;
  std::int64_t step = -1;
  std::uint64_t layout_hash = 0;
  int rank = 0, world = 1;
  //! Ranks per data-parallel replica when every replica holds the same state and only the first
  //! replica persists (one shard per replica); `world` when every rank persists its own.
  int replica_ranks = 1;
  //! The job generation the snapshot belongs to ($CTWIN_GENERATION when it was saved, or the
  //! generation of the shard it was restored from): ranks' files of one step from different
  //! generations are of different timelines (a restart from an older step forks a new one).
  int generation = 0;
  //! Whether this rank's snapshots go to disk: its shard is its own, not a replica-mate's.
  bool persists() const { return rank < replica_ranks; }
};

//! Where a rank's slots live: `<dir>/ctwin-flash-<name>-r<rank>-s<index>`.
struct SlotLocation {
  std::string shm_dir = "/dev/shm";
  std::string name;
  int rank = 0;
  std::string path(int index) const;
};

class ShmSlot {
 public:
  //! Opens an existing slot read-only for inspection; nullopt-like: `valid()` false when absent or
  //! not a slot.
  static ShmSlot open_existing(const std::string& path, bool writable);
  //! Opens or creates the slot for `layout`, reserving its memory now (posix_fallocate), so that a
  //! full /dev/shm is a clear error before any copy instead of a SIGBUS during one. An existing slot
  //! of another size is recreated (its old content is of another layout anyway).
  static ShmSlot create_for(const std::string& path, const Layout& layout, int rank, int world, int replica_ranks = 0);

  //! Bytes a slot of `layout` maps.
  static std::uint64_t bytes_for(const Layout& layout);
  //! Bytes `create_for` would newly reserve at `path` (0 when a slot of that size is there).
  static std::uint64_t bytes_to_create(const std::string& path, const Layout& layout);

  ShmSlot() = default;
  ShmSlot(ShmSlot&&) noexcept;
  ShmSlot& operator=(ShmSlot&&) noexcept;
  ShmSlot(const ShmSlot&) = delete;
  ShmSlot& operator=(const ShmSlot&) = delete;
  ~ShmSlot();

  bool valid() const { return base_ != nullptr; }
  const std::string& path() const { return path_; }
  SlotSummary summary() const;
  //! The layout recorded in the header (names, sizes, offsets).
  Layout recorded_layout() const;
  unsigned char* payload() const;
  std::uint64_t payload_bytes() const;
  void* mapping() const { return base_; }
  std::size_t mapping_bytes() const { return size_; }

  //! Writer side: Writing with `step` and `layout`, then the caller copies, then `mark_complete`.
  //! `replica_ranks` 0: `world` (every rank persists its own shard).
  void begin_write(std::int64_t step, const Layout& layout, int rank, int world, int replica_ranks = 0, int generation = 0);
  void mark_complete();
  //! Empty: its snapshot is of a timeline the job abandoned (a restore of an older step).
  void mark_empty();

  //! flock on a descriptor of its own (so that two users in one process also exclude each other).
  class Lock {
   public:
    Lock(const std::string& path, bool exclusive);
    Lock(Lock&&) noexcept;
    Lock(const Lock&) = delete;
    ~Lock();

   private:
    int fd_ = -1;
  };

 private:
  ShmSlot(std::string path, int fd, void* base, std::size_t size) : path_(std::move(path)), fd_(fd), base_(base), size_(size) {}
  void release();
  std::string path_;
  int fd_ = -1;
  void* base_ = nullptr;
  std::size_t size_ = 0;
};

//! Free bytes in the file system holding `dir` (statvfs).
std::uint64_t free_bytes(const std::string& dir);
//! The message for a shared-memory folder too small for two slots of `slot_bytes`.
std::string shm_too_small(const std::string& dir, std::uint64_t slot_bytes);

}  // namespace ctwin::flash
