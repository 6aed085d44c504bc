#include "live/checkpoint/disk_store.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "live/checkpoint/crc32c.hpp"
#include "live/checkpoint/flash_error.hpp"

namespace fs = std::filesystem;

namespace ctwin::flash {

namespace {

constexpr std::uint64_t kChunk = 16ull << 20;

[[noreturn]] void persist_failure(const std::string& path, const std::string& what, int e) {
  std::string text = system_error_text(path, what, e);
  const FlashError error(ErrorKind::Persist, text, e);
  if (error.out_of_space()) text += " (disk full or over quota; the previous checkpoint is intact)";
  throw FlashError(ErrorKind::Persist, text, e);
}

void write_all(int fd, const std::string& path, const unsigned char* p, std::uint64_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, std::min<std::uint64_t>(n, kChunk));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) persist_failure(path, "write failed", w < 0 ? errno : ENOSPC);
    p += w;
    n -= static_cast<std::uint64_t>(w);
  }
}

//! Writes `bytes` to `path` through a unique temporary name: fsync, rename. Removes the temporary on failure.
void write_durably(const std::string& path, const unsigned char* bytes, std::uint64_t n, mode_t mode) {
  std::ostringstream temp_name;
  temp_name << path << ".tmp." << ::getpid() << "." << std::hash<std::thread::id>{}(std::this_thread::get_id());
  const std::string temp = temp_name.str();
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) persist_failure(temp, "cannot create", errno);
  try {
    if (::fchmod(fd, mode) != 0) persist_failure(temp, "chmod failed", errno);  // the mode configured, whatever the umask
    write_all(fd, temp, bytes, n);
    if (::fsync(fd) != 0) persist_failure(temp, "fsync failed", errno);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    persist_failure(temp, "close failed", e);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    persist_failure(path, "rename failed", e);
  }
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string render(const Manifest& m) {
  std::ostringstream out;
  out << "ctwin-flash-manifest 2\nstep " << m.step << "\nrank " << m.rank << "\nworld " << m.world << "\n";
  if (m.replicas > 1) out << "replicas " << m.replicas << "\n";
  out << "generation " << m.generation << "\n";
  out << "layout " << std::hex << m.layout_hash << std::dec << "\nshard " << m.shard_file << " " << m.shard_bytes << "\n";
  for (const auto& b : m.buffers) {
    char crc[16];
    std::snprintf(crc, sizeof crc, "%08x", b.crc);
    out << "buffer " << b.name << " " << b.offset << " " << b.bytes << " " << crc << (b.description.empty() ? "" : " " + b.description) << "\n";
  }
  out << "end\n";
  return out.str();
}

//! A manifest (version 1 has no generation: 0). `head_only`: the fields before the buffers, up to
//! the shard line, without reading the buffers (a model's manifest has a line per tensor).
std::optional<Manifest> parse(std::istream& in, bool head_only = false) {
  Manifest m;
  std::string line, key;
  if (!std::getline(in, line) || (line != "ctwin-flash-manifest 2" && line != "ctwin-flash-manifest 1")) return std::nullopt;
  bool ended = false;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    fields >> key;
    if (key == "step") fields >> m.step;
    else if (key == "rank") fields >> m.rank;
    else if (key == "world") fields >> m.world;
    else if (key == "replicas") fields >> m.replicas;
    else if (key == "generation") fields >> m.generation;
    else if (key == "layout") fields >> std::hex >> m.layout_hash;
    else if (key == "shard") {
      fields >> m.shard_file >> m.shard_bytes;
      if (!fields.fail() && head_only) {
        ended = true;
        break;
      }
    } else if (key == "buffer") {
      Manifest::Buffer b;
      fields >> b.name >> b.offset >> b.bytes >> std::hex >> b.crc >> std::dec;
      if (fields.fail()) return std::nullopt;
      const auto rest = line.find_first_not_of(' ', static_cast<std::size_t>(fields.tellg()));
      if (rest != std::string::npos) b.description = line.substr(rest);  // none is fine
      m.buffers.push_back(b);
      continue;
    } else if (key == "end") {
      ended = true;
      break;
    } else
      return std::nullopt;
    if (fields.fail()) return std::nullopt;
  }
  if (!ended || m.step < 0 || m.shard_file.empty() || m.world < 1 || m.replicas < 1) return std::nullopt;
  return m;
}

//! A temporary (`NAME.tmp.PID.THREAD`) whose writing process no longer exists.
bool writer_died(const std::string& name) {
  const auto at = name.find(".tmp.");
  if (at == std::string::npos) return false;
  const long pid = std::strtol(name.c_str() + at + 5, nullptr, 10);
  return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

//! The step a folder named `step-<12 digits>` holds; nullopt for any other name (a stray folder
//! in the persist dir is not ours and must not stop a persist).
std::optional<std::int64_t> step_of(const std::string& name) {
  if (name.size() != 17 || name.rfind("step-", 0) != 0 || name.find_first_not_of("0123456789", 5) != std::string::npos)
    return std::nullopt;
  return std::strtoll(name.c_str() + 5, nullptr, 10);
}

//! The rank a file named `rank-<5 digits>.…` belongs to; nullopt for any other name.
std::optional<int> rank_of(const std::string& name) {
  if (name.size() < 11 || name.rfind("rank-", 0) != 0 || name[10] != '.' || name.find_first_not_of("0123456789", 5) != 10)
    return std::nullopt;
  return static_cast<int>(std::strtol(name.c_str() + 5, nullptr, 10));
}

}  // namespace

mode_t checkpoint_file_mode() {
  const char* text = std::getenv("CTWIN_FLASH_FILE_MODE");
  if (!text || !*text) return 0600;
  char* end = nullptr;
  const long mode = std::strtol(text, &end, 8);
  if (*end != '\0' || mode < 0400 || mode > 0666 || (mode & 0600) != 0600)
    throw FlashError(ErrorKind::Usage, std::string("$CTWIN_FLASH_FILE_MODE ") + text + ": expected an octal file mode from 0600 to 0666");
  return static_cast<mode_t>(mode);
}

DiskStore::DiskStore(std::string dir, int rank, int world, int keep_last, bool replicated, int replica_ranks)
    : dir_(std::move(dir)),
      rank_(rank),
      world_(world),
      keep_last_(std::max(keep_last, 1)),
      replicated_(replicated),
      replica_ranks_(replica_ranks > 0 ? replica_ranks : world) {}

DiskStore::SavedWorld DiskStore::saved_world(std::int64_t step) const {
  std::ifstream in(rank_file(step, "manifest", 0));
  if (!in) return {};
  const auto m = parse(in, true);
  if (!m || m->step != step) return {};
  return {m->world, m->replicas, m->generation};
}

int DiskStore::source_rank(std::int64_t step) const { return source_rank(saved_world(step)); }

int DiskStore::source_rank(const SavedWorld& saved) const {
  if (saved.shards < 1) return -1;
  // Not replicated (a sharded state): only a job of this very world reads it, each rank its own
  // shard or, saved one per replica, its replica-mate's.
  if (!replicated_ && saved.shards * saved.replicas != world_) return -1;
  return rank_ % saved.shards;
}

bool DiskStore::prunes_for(int rank) const { return rank == rank_ || (rank >= replica_ranks_ && rank % replica_ranks_ == rank_); }

std::string DiskStore::step_dir(std::int64_t step) const {
  char name[32];
  std::snprintf(name, sizeof name, "step-%012" PRId64, step);
  return dir_ + "/" + name;
}

std::string DiskStore::rank_file(std::int64_t step, const char* suffix, int rank) const {
  char name[32];
  std::snprintf(name, sizeof name, "rank-%05d.%s", rank, suffix);
  return step_dir(step) + "/" + name;
}

void DiskStore::persist(const ShmSlot& slot, std::int64_t step) {
  const std::string folder = step_dir(step);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) persist_failure(folder, "cannot create the checkpoint folder", ec.value());
  const mode_t file_mode_ = checkpoint_file_mode();  // read when writing: a reader (the agent's look at the steps held) needs none
  // The folder opens to whoever may read its files (0700 for files of 0600).
  const mode_t folder_mode = file_mode_ | 0100 | ((file_mode_ & 044) >> 2);
  if (::chmod(folder.c_str(), folder_mode) != 0 && errno != EPERM) persist_failure(folder, "chmod failed", errno);  // another user's folder: left as it is
  const Layout layout = slot.recorded_layout();
  const SlotSummary saver = slot.summary();
  if (!saver.persists() || saver.rank != rank_)
    throw FlashError(ErrorKind::Usage, slot.path() + ": rank " + std::to_string(saver.rank) + "'s snapshot is not rank " +
                                           std::to_string(rank_) + "'s to persist (ranks per replica " + std::to_string(saver.replica_ranks) + ")");
  Manifest m;
  m.step = step;
  m.rank = rank_;
  m.world = saver.replica_ranks;
  m.replicas = std::max(saver.world / std::max(saver.replica_ranks, 1), 1);
  m.generation = saver.generation;
  m.layout_hash = layout.hash;
  m.shard_file = fs::path(rank_file(step, "shard")).filename().string();
  m.shard_bytes = slot.payload_bytes();
  for (const auto& b : layout.buffers)
    m.buffers.push_back({b.name, b.offset, b.bytes, crc32c(0, slot.payload() + b.offset, b.bytes), b.description});
  const std::string text = render(m);
  try {
    write_durably(rank_file(step, "shard"), slot.payload(), slot.payload_bytes(), file_mode_);
    try {
      write_durably(rank_file(step, "manifest"), reinterpret_cast<const unsigned char*>(text.data()), text.size(), file_mode_);
    } catch (...) {
      ::unlink(rank_file(step, "shard").c_str());
      throw;
    }
  } catch (...) {
    fs::remove(folder, ec);  // only when empty: no folder of a step that is not there (other ranks' files keep it)
    throw;
  }
  fsync_dir(folder);
  fsync_dir(dir_);
  prune();
}

std::optional<Manifest> DiskStore::manifest(std::int64_t step) const {
  const int source = source_rank(step);  // this rank's own shard, or its replica-mate's
  if (source < 0) return std::nullopt;
  std::ifstream in(rank_file(step, "manifest", source));
  if (!in) return std::nullopt;
  auto m = parse(in);
  if (m && (m->step != step || m->rank != source)) return std::nullopt;
  return m;
}

bool DiskStore::complete(std::int64_t step) const {
  const SavedWorld saved = saved_world(step);  // rank 0's manifest, read once
  if (source_rank(saved) < 0) return false;
  for (int r = 1; r < saved.shards; ++r) {  // rank 0's is read: saved
    std::ifstream in(rank_file(step, "manifest", r));
    const auto m = in ? parse(in, true) : std::nullopt;
    if (!m || m->step != step || m->generation != saved.generation) return false;
  }
  return true;
}

std::vector<std::int64_t> DiskStore::complete_steps() const {
  std::vector<std::int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (const auto step = step_of(entry.path().filename().string()); step && complete(*step)) steps.push_back(*step);
  std::sort(steps.rbegin(), steps.rend());
  return steps;
}

bool DiskStore::verify(const Manifest& m, std::string& why) const {
  const std::string path = shard_path(m);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = system_error_text(path, "cannot open", errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != m.shard_bytes) {
    ::close(fd);
    why = path + ": not the size its manifest says";
    return false;
  }
  std::vector<unsigned char> chunk(static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, std::max<std::uint64_t>(m.shard_bytes, 1))));
  for (const auto& b : m.buffers) {
    std::uint32_t crc = 0;
    bool whole = b.offset + b.bytes <= m.shard_bytes;
    for (std::uint64_t done = 0; whole && done < b.bytes;) {
      const ssize_t r = ::pread(fd, chunk.data(), std::min<std::uint64_t>(chunk.size(), b.bytes - done), static_cast<off_t>(b.offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) whole = false;
      else crc = crc32c(crc, chunk.data(), static_cast<std::size_t>(r)), done += static_cast<std::uint64_t>(r);
    }
    if (!whole || crc != b.crc) {
      ::close(fd);
      why = path + ": buffer " + b.name + " fails its checksum";
      return false;
    }
  }
  ::close(fd);
  return true;
}

bool DiskStore::load(const Manifest& m, unsigned char* payload, std::uint64_t capacity, std::string& why) const {
  const std::string path = shard_path(m);
  if (m.shard_bytes > capacity) {
    why = path + ": larger than the registered buffers";
    return false;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = system_error_text(path, "cannot open", errno);
    return false;
  }
  std::uint64_t done = 0;
  while (done < m.shard_bytes) {
    const ssize_t r = ::read(fd, payload + done, std::min(kChunk, m.shard_bytes - done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    done += static_cast<std::uint64_t>(r);
  }
  ::close(fd);
  if (done != m.shard_bytes) {
    why = path + ": shorter than its manifest says";
    return false;
  }
  for (const auto& b : m.buffers)
    if (b.offset + b.bytes > m.shard_bytes || crc32c(0, payload + b.offset, b.bytes) != b.crc) {
      why = path + ": buffer " + b.name + " fails its checksum";
      return false;
    }
  return true;
}

void DiskStore::prune_for_space() const {
  const std::vector<std::int64_t> complete = complete_steps();
  const std::int64_t newest_complete = complete.empty() ? -1 : complete.front();
  // Newer steps other ranks have not completed (one rank slow, or saving other steps): this rank's
  // newest keep_last of them stay, for a rank behind to complete; the rest would fill any disk.
  std::vector<std::int64_t> newer;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (const auto step = step_of(entry.path().filename().string()); step && *step > newest_complete) newer.push_back(*step);
  std::sort(newer.rbegin(), newer.rend());
  const std::int64_t newest_dropped = newer.size() > static_cast<std::size_t>(keep_last_) ? newer[keep_last_] : -1;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const auto step = step_of(entry.path().filename().string());
    if (!step || *step == newest_complete || (*step > newest_complete && *step > newest_dropped)) continue;  // what a restore needs, and the newest
    std::vector<fs::path> manifests, others;
    for (const auto& file : fs::directory_iterator(entry.path(), ec)) {
      const std::string name = file.path().filename().string();
      if (const auto rank = rank_of(name); rank && prunes_for(*rank)) (name.ends_with(".manifest") ? manifests : others).push_back(file.path());
    }
    for (const auto* files : {&manifests, &others})  // manifests first, as in prune()
      for (const auto& path : *files) fs::remove(path, ec);
    fs::remove(entry.path(), ec);
  }
}

void DiskStore::prune() const {
  // Keep the newest K steps complete for every rank, and every newer one: a rank ahead of another
  // (a slower persister elsewhere, a rank stuck in a hang) must not drop the newest step the whole
  // job can restore. This rank's files in older folders go, and its temporaries from writers that
  // died. A folder goes when it is empty. A step older than the newest complete one that is not
  // complete itself never will be (each rank persists in step order, skipping steps when behind):
  // its files go too, or a crash mid-save would hold world-size shards of disk for ever.
  std::error_code ec;
  std::vector<std::pair<fs::path, std::int64_t>> folders;
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (const auto step = step_of(entry.path().filename().string())) folders.emplace_back(entry.path(), *step);
  const std::vector<std::int64_t> complete = complete_steps();
  const std::int64_t oldest_kept = complete.size() >= static_cast<std::size_t>(keep_last_) ? complete[keep_last_ - 1] : -1;
  for (const auto& [folder, step] : folders) {
    const bool never_complete = !complete.empty() && step < complete.front() && !std::binary_search(complete.rbegin(), complete.rend(), step);
    const bool drop_all = (oldest_kept >= 0 && step < oldest_kept) || never_complete;
    // Manifests go first: a kill between the two removals must not leave a manifest that
    // publishes a shard which is gone (the step would still count as complete). A folder no rank
    // will ever need (older than the kept steps, or never to be complete) goes whole, every rank's
    // files in it: a rank that never persists again (its node left the job) would leave its own
    // for ever. Otherwise a rank removes only its own temporaries, from writers that died.
    std::vector<fs::path> manifests, others;
    for (const auto& file : fs::directory_iterator(folder, ec)) {
      const std::string name = file.path().filename().string();
      const auto rank = rank_of(name);
      if (!rank || (!drop_all && !prunes_for(*rank))) continue;
      if (drop_all) (name.ends_with(".manifest") ? manifests : others).push_back(file.path());
      else if (*rank == rank_ && writer_died(name)) others.push_back(file.path());
    }
    for (const auto* files : {&manifests, &others})
      for (const auto& path : *files) fs::remove(path, ec);
    if (drop_all) fs::remove(folder, ec);  // only when empty: other ranks' files keep it
  }
}

}  // namespace ctwin::flash
