#include "live/checkpoint/shm_slot.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "live/checkpoint/flash_error.hpp"

namespace ctwin::flash {

namespace {

// 2: buffers carry a description; 3: the header says the ranks per replica (one shard per replica)
constexpr char kMagic[8] = {'C', 'T', 'W', 'F', 'L', 'S', 'H', '3'};
constexpr std::uint64_t kPage = 4096;
constexpr std::size_t kNameBytes = 112;

struct Header {
  char magic[8];
  std::uint32_t state;  //!< SlotState, through std::atomic_ref
  std::uint32_t buffer_count;
  std::int64_t step;
  std::uint64_t layout_hash;
  std::uint64_t payload_offset;
  std::uint64_t payload_bytes;
  std::int32_t rank;
  std::int32_t world;
  std::int32_t replica_ranks;
  std::int32_t generation;  //!< the job's generation whose timeline the snapshot is on (was reserved, 0)
};
struct Entry {
  char name[kNameBytes];
  std::uint64_t offset;
  std::uint64_t bytes;
  char description[kLongestDescription + 1];
};

std::uint64_t align_up(std::uint64_t x, std::uint64_t to) { return (x + to - 1) / to * to; }
std::uint64_t header_bytes(std::size_t buffers) { return align_up(sizeof(Header) + buffers * sizeof(Entry), kPage); }
std::uint64_t slot_bytes(const Layout& layout) { return header_bytes(layout.buffers.size()) + layout.payload_bytes; }

Header* header_of(void* base) { return static_cast<Header*>(base); }
Entry* entries_of(void* base) { return reinterpret_cast<Entry*>(static_cast<char*>(base) + sizeof(Header)); }

std::string human_mib(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

}  // namespace

bool FlashError::out_of_space() const { return errno_ == ENOSPC || errno_ == EDQUOT || errno_ == EFBIG; }

std::string system_error_text(const std::string& path, const std::string& what, int error_number) {
  return path + ": " + what + ": " + std::strerror(error_number);
}

Layout Layout::of(const std::vector<BufferSpec>& specs) {
  Layout layout;
  std::uint64_t hash = 1469598103934665603ull;
  auto mix = [&hash](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  };
  for (const auto& spec : specs) {
    const std::string& name = spec.name;
    const std::uint64_t bytes = spec.bytes;
    if (spec.description.size() > kLongestDescription || spec.description.find('\n') != std::string::npos)
      throw FlashError(ErrorKind::Usage, "buffer '" + name + "': a description has one line of at most " + std::to_string(kLongestDescription) + " characters");
    if (name.empty() || name.size() >= kNameBytes)
      throw FlashError(ErrorKind::Usage, "buffer name '" + name + "' must have 1 to " + std::to_string(kNameBytes - 1) + " characters");
    for (const char c : name)
      if (c <= ' ' || c > '~')
        throw FlashError(ErrorKind::Usage, "buffer name '" + name + "' may hold printable characters only, no spaces");
    for (const auto& b : layout.buffers)
      if (b.name == name) throw FlashError(ErrorKind::Usage, "buffer '" + name + "' is registered twice");
    layout.buffers.push_back({name, bytes, layout.payload_bytes, spec.description});
    layout.payload_bytes = align_up(layout.payload_bytes + bytes, kPage);
    mix(name.data(), name.size() + 1);
    mix(&bytes, sizeof bytes);
    if (!spec.description.empty()) mix(spec.description.data(), spec.description.size() + 1);
  }
  layout.hash = hash;
  return layout;
}

std::string SlotLocation::path(int index) const {
  return shm_dir + "/ctwin-flash-" + name + "-r" + std::to_string(rank) + "-s" + std::to_string(index);
}

std::uint64_t free_bytes(const std::string& dir) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return 0;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

std::string shm_too_small(const std::string& dir, std::uint64_t slot_bytes) {
  return dir + " is too small: a rank's two snapshot slots need " + human_mib(2 * slot_bytes) + ", " +
         human_mib(free_bytes(dir)) + " are free; give the container more shared memory (docker run --shm-size, "
         "a memory-backed /dev/shm emptyDir in Kubernetes)";
}

std::uint64_t ShmSlot::bytes_for(const Layout& layout) { return slot_bytes(layout); }

std::uint64_t ShmSlot::bytes_to_create(const std::string& path, const Layout& layout) {
  struct stat st {};
  const std::uint64_t need = slot_bytes(layout);
  return ::stat(path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) == need ? 0 : need;
}

ShmSlot ShmSlot::open_existing(const std::string& path, bool writable) {
  const int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return {};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) < kPage) {
    ::close(fd);
    return {};
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* base = ::mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    ::close(fd);
    return {};
  }
  ShmSlot slot(path, fd, base, size);
  const Header* h = header_of(base);
  if (std::memcmp(h->magic, kMagic, sizeof kMagic) != 0 || h->payload_offset + h->payload_bytes > size ||
      header_bytes(h->buffer_count) > h->payload_offset)
    return {};  // not a slot, or one being created
  return slot;
}

ShmSlot ShmSlot::create_for(const std::string& path, const Layout& layout, int rank, int world, int replica_ranks) {
  const std::uint64_t need = slot_bytes(layout);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw FlashError(ErrorKind::SharedMemory, system_error_text(path, "cannot create the shared-memory slot", errno));
  struct stat st {};
  ::fstat(fd, &st);
  if (static_cast<std::uint64_t>(st.st_size) != need) {
    // Another layout: start from an empty file so that no stale header survives a failed resize.
    if (::ftruncate(fd, 0) != 0 || ::ftruncate(fd, static_cast<off_t>(need)) != 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(path.c_str());
      throw FlashError(ErrorKind::SharedMemory, system_error_text(path, "cannot size the shared-memory slot", e));
    }
    const int e = ::posix_fallocate(fd, 0, static_cast<off_t>(need));
    if (e != 0) {
      ::close(fd);
      ::unlink(path.c_str());
      throw FlashError(ErrorKind::SharedMemory, e == ENOSPC ? shm_too_small(path.substr(0, path.rfind('/')), need)
                                                            : system_error_text(path, "cannot reserve shared memory", e));
    }
  }
  void* base = ::mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int e = errno;
    ::close(fd);
    throw FlashError(ErrorKind::SharedMemory, system_error_text(path, "cannot map the shared-memory slot", e));
  }
  ShmSlot slot(path, fd, base, need);
  Header* h = header_of(base);
  if (std::memcmp(h->magic, kMagic, sizeof kMagic) != 0 || h->layout_hash != layout.hash) {
    // A fresh (or foreign) slot: an empty header of this layout.
    std::atomic_ref<std::uint32_t>(h->state).store(static_cast<std::uint32_t>(SlotState::Empty), std::memory_order_release);
    slot.begin_write(-1, layout, rank, world, replica_ranks);
    std::atomic_ref<std::uint32_t>(h->state).store(static_cast<std::uint32_t>(SlotState::Empty), std::memory_order_release);
  }
  return slot;
}

ShmSlot::ShmSlot(ShmSlot&& o) noexcept { *this = std::move(o); }
ShmSlot& ShmSlot::operator=(ShmSlot&& o) noexcept {
  if (this != &o) {
    release();
    path_ = std::move(o.path_);
    fd_ = std::exchange(o.fd_, -1);
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}
ShmSlot::~ShmSlot() { release(); }
void ShmSlot::release() {
  if (base_) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

SlotSummary ShmSlot::summary() const {
  SlotSummary s;
  if (!base_) return s;
  Header* h = header_of(base_);
  s.state = static_cast<SlotState>(std::atomic_ref<std::uint32_t>(h->state).load(std::memory_order_acquire));
  s.step = h->step;
  s.layout_hash = h->layout_hash;
  s.rank = h->rank;
  s.world = h->world;
  s.replica_ranks = h->replica_ranks;
  s.generation = h->generation;
  return s;
}

Layout ShmSlot::recorded_layout() const {
  Layout layout;
  const Header* h = header_of(base_);
  const Entry* e = entries_of(base_);
  for (std::uint32_t i = 0; i < h->buffer_count; ++i)
    layout.buffers.push_back({std::string(e[i].name, ::strnlen(e[i].name, kNameBytes)), e[i].bytes, e[i].offset,
                              std::string(e[i].description, ::strnlen(e[i].description, sizeof e[i].description))});
  layout.payload_bytes = h->payload_bytes;
  layout.hash = h->layout_hash;
  return layout;
}

unsigned char* ShmSlot::payload() const {
  return static_cast<unsigned char*>(base_) + header_of(base_)->payload_offset;
}
std::uint64_t ShmSlot::payload_bytes() const { return header_of(base_)->payload_bytes; }

void ShmSlot::begin_write(std::int64_t step, const Layout& layout, int rank, int world, int replica_ranks, int generation) {
  Header* h = header_of(base_);
  // Writing first: from here until mark_complete() no reader takes this slot.
  std::atomic_ref<std::uint32_t>(h->state).store(static_cast<std::uint32_t>(SlotState::Writing), std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::memcpy(h->magic, kMagic, sizeof kMagic);
  h->buffer_count = static_cast<std::uint32_t>(layout.buffers.size());
  h->step = step;
  h->layout_hash = layout.hash;
  h->payload_offset = header_bytes(layout.buffers.size());
  h->payload_bytes = layout.payload_bytes;
  h->rank = rank;
  h->world = world;
  h->replica_ranks = replica_ranks > 0 ? replica_ranks : world;
  h->generation = generation;
  Entry* e = entries_of(base_);
  for (std::size_t i = 0; i < layout.buffers.size(); ++i) {
    std::memset(e[i].name, 0, kNameBytes);
    std::memcpy(e[i].name, layout.buffers[i].name.data(), layout.buffers[i].name.size());
    e[i].offset = layout.buffers[i].offset;
    e[i].bytes = layout.buffers[i].bytes;
    std::memset(e[i].description, 0, sizeof e[i].description);
    std::memcpy(e[i].description, layout.buffers[i].description.data(), std::min(layout.buffers[i].description.size(), kLongestDescription));
  }
}

void ShmSlot::mark_complete() {
  std::atomic_ref<std::uint32_t>(header_of(base_)->state)
      .store(static_cast<std::uint32_t>(SlotState::Complete), std::memory_order_release);
}

void ShmSlot::mark_empty() {
  std::atomic_ref<std::uint32_t>(header_of(base_)->state).store(static_cast<std::uint32_t>(SlotState::Empty), std::memory_order_release);
}

ShmSlot::Lock::Lock(const std::string& path, bool exclusive) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw FlashError(ErrorKind::SharedMemory, system_error_text(path, "cannot open to lock", errno));
  while (::flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    ::close(fd_);
    throw FlashError(ErrorKind::SharedMemory, system_error_text(path, "cannot lock", e));
  }
}
ShmSlot::Lock::Lock(Lock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
ShmSlot::Lock::~Lock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor drops the lock
}

}  // namespace ctwin::flash
