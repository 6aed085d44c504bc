#include "live/checkpoint/flash_engine.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "core/wall_clock.hpp"
#include "live/backend/plugin_loader.hpp"
#include "live/checkpoint/flash_error.hpp"

namespace ctwin::flash {

namespace {

using Clock = std::chrono::steady_clock;

bool is_complete(const ShmSlot& slot, std::uint64_t layout_hash) {
  const SlotSummary s = slot.summary();
  return slot.valid() && s.state == SlotState::Complete && s.layout_hash == layout_hash;
}

//! $CTWIN_GENERATION, the job generation the agent launched (or an in-process restart rejoined); 0 when unset.
int generation_from_environment() {
  const char* text = std::getenv("CTWIN_GENERATION");
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long g = std::strtol(text, &end, 10);
  if (*end != '\0' || g < 0 || g > std::numeric_limits<std::int32_t>::max())
    throw FlashError(ErrorKind::Usage, std::string("$CTWIN_GENERATION '") + text + "' is not a generation (a whole number from 0)");
  return static_cast<int>(g);
}

}  // namespace

Engine::Engine(EngineOptions options) : options_(std::move(options)) {
  if (options_.name.empty() || options_.name.find_first_of("/ \t\n") != std::string::npos)
    throw FlashError(ErrorKind::Usage, "checkpoint name '" + options_.name + "' must be non-empty, without '/' or spaces");
  if (options_.rank < 0 || options_.world < 1 || options_.rank >= options_.world)
    throw FlashError(ErrorKind::Usage, "rank " + std::to_string(options_.rank) + " is outside a world of " +
                                           std::to_string(options_.world));
  // Said now, and as what it is: a missing folder has no free space, which read as "too small".
  std::error_code ec;
  if (!std::filesystem::is_directory(options_.shm_dir, ec))
    throw FlashError(ErrorKind::SharedMemory, options_.shm_dir + ": " +
                                                  (std::filesystem::exists(options_.shm_dir, ec) ? "is not a folder"
                                                                                                 : "the folder does not exist") +
                                                  " (the shared-memory folder for the snapshots, e.g. /dev/shm)");
  location_ = {options_.shm_dir, options_.name, options_.rank};
  if (const char* replicated = std::getenv("CTWIN_FLASH_REPLICATED"); replicated && std::string(replicated) == "1") options_.replicated = true;
  if (const char* replica_ranks = std::getenv("CTWIN_FLASH_REPLICA_RANKS"); replica_ranks && options_.replica_ranks == 0) {
    char* end = nullptr;
    const long n = std::strtol(replica_ranks, &end, 10);
    if (end == replica_ranks || *end != '\0' || n < 0 || n > options_.world)
      throw FlashError(ErrorKind::Usage, std::string("$CTWIN_FLASH_REPLICA_RANKS '") + replica_ranks + "' is not a rank count from 0 to the world, " +
                                             std::to_string(options_.world));
    options_.replica_ranks = static_cast<int>(n);
  }
  if (options_.replica_ranks == 0) options_.replica_ranks = options_.world;
  if (options_.replica_ranks < 1 || options_.world % options_.replica_ranks != 0)
    throw FlashError(ErrorKind::Usage, "ranks per replica " + std::to_string(options_.replica_ranks) + " do not divide the world, " +
                                           std::to_string(options_.world));
  persists_ = options_.rank < options_.replica_ranks;
  generation_ = generation_from_environment();
  // Fault injection for the live tests: "hold_save_at=S" holds the first save of a step >= S, its
  // slot marked Writing, for up to a minute, in the first attempt only: a test then kills the
  // trainer inside a save by watching the slot's state, where a copy of milliseconds could only be raced.
  const char* inject = std::getenv("CTWIN_FLASH_INJECT");
  const char* attempt = std::getenv("CTWIN_ATTEMPT");
  if (inject && std::strncmp(inject, "hold_save_at=", 13) == 0 && (!attempt || std::string(attempt) == "0"))
    hold_save_at_ = std::strtoll(inject + 13, nullptr, 10);
  if (!options_.persist_dir.empty()) {
    checkpoint_file_mode();  // a bad $CTWIN_FLASH_FILE_MODE is said at the open, not at the first persist
    store_.emplace(options_.persist_dir, options_.rank, options_.world, options_.keep_last, options_.replicated, options_.replica_ranks);
    if (options_.persist_in_background && persists_) persister_ = std::thread([this] { persist_loop(); });
  }
}

Engine::~Engine() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (persister_.joinable()) persister_.join();
  if (slots_pinned_)
    for (auto& slot : slots_)
      if (slot.valid()) device_copies()->host_unregister(slot.mapping());
}

const ctwin_backend_v1* Engine::device_copies() const {
  try {
    return &live::cuda_plugin();
  } catch (const CannotRunHere& e) {
    throw FlashError(ErrorKind::Device, std::string("GPU buffers need the CUDA plugin: ") + e.what());
  }
}

void Engine::register_buffer(const std::string& name, void* ptr, std::uint64_t bytes, int device, const std::string& description) {
  if (ptr == nullptr && bytes > 0) throw FlashError(ErrorKind::Usage, "buffer '" + name + "' has a null pointer");
  if (device >= 0) device_copies();  // fail now, not at the first save
  std::vector<BufferSpec> specs;
  for (const auto& b : buffers_) specs.push_back({b.name, b.bytes, 0, b.description});
  specs.push_back({name, bytes, 0, description});
  layout_ = Layout::of(specs);  // checks the name and the description
  buffers_.push_back({name, ptr, bytes, device, description});
  for (auto& slot : slots_) slot = ShmSlot();  // a new layout: slots are (re)opened at the next save
}

void Engine::ensure_slots() {
  if (buffers_.empty()) throw FlashError(ErrorKind::Usage, "no buffers registered");
  bool any_device = false;
  for (const auto& b : buffers_) any_device |= b.device >= 0;
  // Check the space for both slots before touching either, so that a full /dev/shm leaves the
  // previous snapshot as it was.
  std::uint64_t growth = 0;
  for (int i = 0; i < 2; ++i)
    if (!slots_[i].valid()) growth += ShmSlot::bytes_to_create(location_.path(i), layout_);
  if (growth > 0 && growth > free_bytes(options_.shm_dir))
    throw FlashError(ErrorKind::SharedMemory, shm_too_small(options_.shm_dir, ShmSlot::bytes_for(layout_)));
  for (int i = 0; i < 2; ++i)
    if (!slots_[i].valid()) {
      slots_[i] = ShmSlot::create_for(location_.path(i), layout_, options_.rank, options_.world, options_.replica_ranks);
      if (any_device) {
        // Page-locked, the copy from the GPU runs at full DMA speed instead of through a bounce buffer.
        const auto* plugin = device_copies();
        live::check_status(*plugin, plugin->host_register(slots_[i].mapping(), slots_[i].mapping_bytes()),
                           "cudaHostRegister of the shared-memory slot");
        slots_pinned_ = true;
      }
    }
}

int Engine::newest_slot(const std::vector<ShmSlot*>& slots) const {
  int best = -1;
  for (int i = 0; i < static_cast<int>(slots.size()); ++i)
    if (is_complete(*slots[i], layout_.hash) && (best < 0 || slots[i]->summary().step > slots[best]->summary().step))
      best = i;
  return best;
}

SaveStats Engine::save(std::int64_t step) {
  const auto t0 = Clock::now();
  ensure_slots();
  const int newest = newest_slot({&slots_[0], &slots_[1]});
  ShmSlot& target = slots_[newest == 0 ? 1 : 0];
  SaveStats stats;
  {
    ShmSlot::Lock exclusive(target.path(), true);  // waits while a persister still reads this slot
    stats.seconds_waiting = seconds_since(t0);
    target.begin_write(step, layout_, options_.rank, options_.world, options_.replica_ranks, generation_);
    if (hold_save_at_ >= 0 && step >= hold_save_at_) {
      hold_save_at_ = -1;
      for (int i = 0; i < 600; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (std::size_t i = 0; i < buffers_.size(); ++i) {
      const auto& b = buffers_[i];
      unsigned char* dst = target.payload() + layout_.buffers[i].offset;
      if (b.device < 0) std::memcpy(dst, b.ptr, b.bytes);
      else {
        const auto* plugin = device_copies();
        if (plugin->copy_to_host(dst, b.ptr, b.bytes) != CTWIN_OK)
          throw FlashError(ErrorKind::Device, "copying buffer " + b.name + " from the GPU: " + plugin->last_error());
      }
      stats.bytes += b.bytes;
    }
    target.mark_complete();
  }
  stats.seconds = seconds_since(t0);
  if (store_ && persists_) {
    {
      std::lock_guard lock(mutex_);
      pending_ = true;
      saved_step_ = std::max(saved_step_, step);
    }
    changed_.notify_all();
  }
  return stats;
}

void Engine::copy_out(const ShmSlot& slot) {
  for (std::size_t i = 0; i < buffers_.size(); ++i) {
    const auto& b = buffers_[i];
    const unsigned char* src = slot.payload() + layout_.buffers[i].offset;
    if (b.device < 0) std::memcpy(b.ptr, src, b.bytes);
    else {
      const auto* plugin = device_copies();
      if (plugin->copy_to_device(b.ptr, src, b.bytes) != CTWIN_OK)
        throw FlashError(ErrorKind::Device, "copying buffer " + b.name + " to the GPU: " + plugin->last_error());
    }
  }
}

std::vector<std::int64_t> Engine::restorable_steps() {
  if (buffers_.empty()) throw FlashError(ErrorKind::Usage, "no buffers registered");
  std::vector<std::int64_t> steps;
  if (store_) steps = store_->complete_steps();
  for (int i = 0; i < 2; ++i) {
    const ShmSlot found = slots_[i].valid() ? ShmSlot() : ShmSlot::open_existing(location_.path(i), false);
    const ShmSlot& slot = slots_[i].valid() ? slots_[i] : found;
    if (is_complete(slot, layout_.hash)) steps.push_back(slot.summary().step);
  }
  std::sort(steps.rbegin(), steps.rend());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

std::vector<std::int64_t> Engine::steps_every_local_rank_has(const std::vector<std::int64_t>& mine,
                                                              const std::vector<std::int64_t>& on_disk) const {
  std::vector<std::int64_t> common;
  for (const std::int64_t step : mine) {
    bool everyone = true;
    for (int r = 0; r < options_.world && everyone; ++r) {
      if (r == options_.rank || std::find(on_disk.begin(), on_disk.end(), step) != on_disk.end()) continue;
      // Another rank's slots (of its own layout): it has `step` when one of them holds it complete.
      const SlotLocation theirs{options_.shm_dir, options_.name, r};
      bool has = false;
      for (int i = 0; i < 2 && !has; ++i) {
        const ShmSlot slot = ShmSlot::open_existing(theirs.path(i), false);
        has = slot.valid() && slot.summary().state == SlotState::Complete && slot.summary().step == step;
      }
      everyone = has;
    }
    if (everyone) common.push_back(step);
  }
  return common;
}

Restored Engine::restore(const StepAgreement& agree) {
  const auto t0 = Clock::now();
  generation_ = generation_from_environment();
  const std::vector<std::int64_t> mine = restorable_steps();
  std::vector<std::int64_t> common;
  if (options_.world == 1) common = mine;
  else if (agree) common = agree(mine);
  else common = steps_every_local_rank_has(mine, store_ ? store_->complete_steps() : std::vector<std::int64_t>{});
  std::sort(common.rbegin(), common.rend());
  Restored result;
  for (const std::int64_t step : mine)
    if (!common.empty() && step > common.front())
      result.skipped.push_back("step " + std::to_string(step) + ": not every rank has it");
  for (const std::int64_t step : common) {
    Restored attempt = restore_step(step);
    result.skipped.insert(result.skipped.end(), attempt.skipped.begin(), attempt.skipped.end());
    if (attempt.step < 0) continue;
    attempt.skipped = std::move(result.skipped);
    attempt.seconds = seconds_since(t0);
    return attempt;
  }
  result.seconds = seconds_since(t0);
  return result;
}

void Engine::discard_newer_than(std::int64_t step) {
  for (int i = 0; i < 2; ++i) {
    ShmSlot opened = slots_[i].valid() ? ShmSlot() : ShmSlot::open_existing(location_.path(i), true);
    ShmSlot& slot = slots_[i].valid() ? slots_[i] : opened;
    if (!is_complete(slot, layout_.hash) || slot.summary().step <= step) continue;
    ShmSlot::Lock exclusive(slot.path(), true);  // a persister reading it finishes first
    if (slot.summary().step > step) slot.mark_empty();
  }
}

Restored Engine::restore_step(std::int64_t step) {
  const auto t0 = Clock::now();
  if (buffers_.empty()) throw FlashError(ErrorKind::Usage, "no buffers registered");
  generation_ = generation_from_environment();
  discard_newer_than(step);
  {
    // A timeline begins at `step`: what this engine saved or persisted past it was of the old one
    // (an in-process restart from a step older than this rank's newest), and is neither on disk
    // for the new one nor to be skipped by the persister as done.
    std::lock_guard lock(mutex_);
    ++timeline_;
    saved_step_ = std::min(saved_step_, step);
    persisted_step_ = std::min(persisted_step_, step);
    failed_step_ = std::min(failed_step_, step);
  }
  Restored result;
  if (step < 0) return result;  // from scratch: nothing to restore, the old snapshots gone
  // In memory: a complete slot of this layout holding `step`, read under a shared lock. The slots
  // this engine has mapped already (no page faults to pay again), else as found.
  ShmSlot found[2];
  ShmSlot* seen[2];
  for (int i = 0; i < 2; ++i) {
    if (!slots_[i].valid()) found[i] = ShmSlot::open_existing(location_.path(i), false);
    seen[i] = slots_[i].valid() ? &slots_[i] : &found[i];
  }
  for (ShmSlot* slot : seen) {
    if (!is_complete(*slot, layout_.hash) || slot->summary().step != step) continue;
    ShmSlot::Lock shared(slot->path(), false);
    const SlotSummary s = slot->summary();
    if (s.state != SlotState::Complete || s.step != step) continue;  // overwritten meanwhile
    copy_out(*slot);
    result.step = step;
    result.source = RestoreSource::Memory;
    result.seconds = seconds_since(t0);
    return result;
  }
  // From disk, through the slot that does not hold the newest memory snapshot: the shard is
  // checked against its manifest there, and memory holds it afterwards.
  const auto on_disk = store_ ? store_->complete_steps() : std::vector<std::int64_t>{};
  if (std::find(on_disk.begin(), on_disk.end(), step) == on_disk.end()) {
    result.skipped.push_back("step " + std::to_string(step) + ": neither in memory nor complete on disk");
    return result;
  }
  const auto manifest = store_->manifest(step);
  if (!manifest || manifest->layout_hash != layout_.hash) {
    result.skipped.push_back("step " + std::to_string(step) + ": its manifest is missing or of another buffer layout");
    return result;
  }
  ensure_slots();
  const int keep = newest_slot({&slots_[0], &slots_[1]});
  ShmSlot& target = slots_[keep == 0 ? 1 : 0];
  ShmSlot::Lock exclusive(target.path(), true);
  target.begin_write(step, layout_, options_.rank, options_.world, options_.replica_ranks, manifest->generation);  // on the shard's timeline
  std::string why;
  if (!store_->load(*manifest, target.payload(), target.payload_bytes(), why)) {
    result.skipped.push_back("step " + std::to_string(step) + ": " + why);
    return result;  // the slot stays Writing: never taken
  }
  target.mark_complete();
  copy_out(target);
  result.step = step;
  result.source = RestoreSource::Disk;
  result.seconds = seconds_since(t0);
  return result;
}

std::optional<std::int64_t> Engine::persist_newest(const SlotLocation& slots, DiskStore& store, std::int64_t after) {
  ShmSlot seen[2] = {ShmSlot::open_existing(slots.path(0), false), ShmSlot::open_existing(slots.path(1), false)};
  int best = -1;
  for (int i = 0; i < 2; ++i) {
    const SlotSummary s = seen[i].summary();
    if (seen[i].valid() && s.state == SlotState::Complete && s.persists() && s.step > after &&
        (best < 0 || s.step > seen[best].summary().step))
      best = i;
  }
  if (best < 0) return std::nullopt;
  const std::int64_t step = seen[best].summary().step;
  ShmSlot::Lock shared(seen[best].path(), false);
  const SlotSummary s = seen[best].summary();
  if (s.state != SlotState::Complete || s.step != step) return std::nullopt;  // overwritten: a newer one comes
  store.persist(seen[best], step);
  return step;
}

namespace {

//! One persist attempt, as plain values. Returned from one function whose `try` and `catch` each
//! return, so no variable lives across the `try`: GCC 12 at -O1 and above dropped the store that
//! cleared a std::optional declared before a `try` whose `catch` path read it, and an engine then
//! reported the step of an earlier engine's persister (tests/live: "a failed persist is reported").
struct PersistAttempt {
  std::int64_t persisted = -1;  //!< the step written, -1 when none
  std::int64_t failed = -1;     //!< the step that could not be written, -1 when none
  std::string error;
  bool out_of_space = false;    //!< the disk is full or over quota
};

PersistAttempt attempt_persist(const SlotLocation& location, DiskStore& store, std::int64_t after) noexcept {
  try {
    return {Engine::persist_newest(location, store, after).value_or(-1), -1, {}};
  } catch (const std::exception& e) {
    const auto* flash_error = dynamic_cast<const FlashError*>(&e);
    // The step that failed: the newest complete one in memory.
    std::int64_t newest = -1;
    try {
      for (int i = 0; i < 2; ++i) {
        const ShmSlot slot = ShmSlot::open_existing(location.path(i), false);
        if (slot.valid()) newest = std::max(newest, slot.summary().step);
      }
    } catch (...) {
    }
    return {-1, std::max<std::int64_t>(newest, after + 1), e.what(), flash_error && flash_error->out_of_space()};
  }
}

//! A persist that failed is tried again after 1 s, then 2, 4 ... at most 30 s apart (a new save
//! tries at once): the disk may be freed while training goes on from memory.
constexpr double kFirstRetryS = 1, kLongestRetryS = 30;

}  // namespace

void Engine::persist_loop() {
  std::unique_lock lock(mutex_);
  double retry_s = 0;  // > 0: the last attempt failed, the next comes after this long
  for (;;) {
    const auto woken = [this] { return pending_ || stopping_; };
    if (retry_s > 0) changed_.wait_for(lock, std::chrono::duration<double>(retry_s), woken);
    else changed_.wait(lock, woken);
    if (!pending_ && stopping_) return;
    pending_ = false;
    const std::int64_t after = persisted_step_;
    const std::uint64_t timeline = timeline_;
    lock.unlock();
    PersistAttempt attempt = attempt_persist(location_, *store_, after);
    if (attempt.out_of_space) {  // room for the new step: only the newest complete one is needed to restore
      store_->prune_for_space();
      attempt = attempt_persist(location_, *store_, after);
    }
    lock.lock();
    if (timeline != timeline_) continue;  // a restore began a new timeline meanwhile: this was of the old one
    persisted_step_ = std::max(persisted_step_, attempt.persisted);
    if (!attempt.error.empty()) {
      persist_error_ = attempt.error;
      failed_step_ = std::max(failed_step_, attempt.failed);
      failing_ = true;
      retry_s = retry_s > 0 ? std::min(2 * retry_s, kLongestRetryS) : kFirstRetryS;
    } else {
      failing_ = false;
      retry_s = 0;
    }
    changed_.notify_all();
  }
}

Engine::PersistHealth Engine::persist_health() const {
  std::lock_guard lock(mutex_);
  return {failing_, failed_step_, persisted_step_, failing_ ? persist_error_ : std::string()};
}

bool Engine::wait_persisted(std::int64_t step, double timeout_s) {
  if (!store_) throw FlashError(ErrorKind::Usage, "no persist folder was given");
  if (!persists_) {  // its replica-mate's shard is this rank's copy on disk: wait for that one
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    for (;;) {
      const auto steps = store_->complete_steps();
      if (!steps.empty() && steps.front() >= step) return true;
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // On disk already, from an earlier attempt (a trainer restored at its last step saves nothing
  // new, and waiting for its own persister would wait for ever). A step this engine saved is its
  // persister's to finish: its manifest shows before the folder's fsync and the prune after it.
  const bool saved_here = [&] {
    std::lock_guard lock(mutex_);
    return step <= saved_step_;
  }();
  if (!saved_here && store_->manifest(step)) {
    std::lock_guard lock(mutex_);
    persisted_step_ = std::max(persisted_step_, step);
    return true;
  }
  if (!saved_here && options_.persist_in_background) {  // restored from memory, not on disk (a disk lost or full then): persist it
    std::lock_guard lock(mutex_);
    pending_ = true;
    changed_.notify_all();
  }
  if (!options_.persist_in_background) {  // the caller persists in its own thread
    const PersistAttempt attempt = attempt_persist(location_, *store_, persisted_step_);
    std::lock_guard lock(mutex_);
    persisted_step_ = std::max(persisted_step_, attempt.persisted);
    if (persisted_step_ >= step) return true;
    if (!attempt.error.empty()) {
      persist_error_ = attempt.error;
      throw FlashError(ErrorKind::Persist, persist_error_);
    }
    return false;
  }
  std::unique_lock lock(mutex_);
  const bool settled = changed_.wait_for(lock, std::chrono::duration<double>(timeout_s), [&] {
    return persisted_step_ >= step || failed_step_ >= step;
  });
  if (persisted_step_ >= step) return true;
  if (settled) throw FlashError(ErrorKind::Persist, persist_error_);
  return false;
}

std::int64_t Engine::persisted_step() const {
  std::lock_guard lock(mutex_);
  return persisted_step_;
}

std::string Engine::persist_error() const {
  std::lock_guard lock(mutex_);
  return persist_error_;
}

}  // namespace ctwin::flash
