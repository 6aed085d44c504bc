#include "live/checkpoint/flash_engine.hpp"

#include <chrono>
#include <cstring>

#include "live/backend/plugin_loader.hpp"
#include "live/checkpoint/flash_error.hpp"

namespace ctwin::flash {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool is_complete(const ShmSlot& slot, std::uint64_t layout_hash) {
  const SlotSummary s = slot.summary();
  return slot.valid() && s.state == SlotState::Complete && s.layout_hash == layout_hash;
}

}  // namespace

Engine::Engine(EngineOptions options) : options_(std::move(options)) {
  if (options_.name.empty() || options_.name.find_first_of("/ \t\n") != std::string::npos)
    throw FlashError(ErrorKind::Usage, "checkpoint name '" + options_.name + "' must be non-empty, without '/' or spaces");
  if (options_.rank < 0 || options_.world < 1 || options_.rank >= options_.world)
    throw FlashError(ErrorKind::Usage, "rank " + std::to_string(options_.rank) + " is outside a world of " +
                                           std::to_string(options_.world));
  location_ = {options_.shm_dir, options_.name, options_.rank};
  if (!options_.persist_dir.empty()) {
    store_.emplace(options_.persist_dir, options_.rank, options_.world, options_.keep_last);
    if (options_.persist_in_background) persister_ = std::thread([this] { persist_loop(); });
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

void Engine::register_buffer(const std::string& name, void* ptr, std::uint64_t bytes, int device) {
  if (ptr == nullptr && bytes > 0) throw FlashError(ErrorKind::Usage, "buffer '" + name + "' has a null pointer");
  if (device >= 0) device_copies();  // fail now, not at the first save
  std::vector<std::pair<std::string, std::uint64_t>> named;
  for (const auto& b : buffers_) named.emplace_back(b.name, b.bytes);
  named.emplace_back(name, bytes);
  layout_ = Layout::of(named);  // checks the name
  buffers_.push_back({name, ptr, bytes, device});
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
      slots_[i] = ShmSlot::create_for(location_.path(i), layout_, options_.rank, options_.world);
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
    stats.seconds_waiting = since(t0);
    target.begin_write(step, layout_, options_.rank, options_.world);
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
  stats.seconds = since(t0);
  if (store_) {
    {
      std::lock_guard lock(mutex_);
      pending_ = true;
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

Restored Engine::restore() {
  const auto t0 = Clock::now();
  if (buffers_.empty()) throw FlashError(ErrorKind::Usage, "no buffers registered");
  Restored result;
  // In memory: the newest complete slot of this layout, read under a shared lock.
  // The slots this engine has mapped already (no page faults to pay again), else as found.
  ShmSlot found[2];
  ShmSlot* seen[2];
  for (int i = 0; i < 2; ++i) {
    if (!slots_[i].valid()) found[i] = ShmSlot::open_existing(location_.path(i), false);
    seen[i] = slots_[i].valid() ? &slots_[i] : &found[i];
  }
  const int in_memory = newest_slot({seen[0], seen[1]});
  const std::int64_t memory_step = in_memory >= 0 ? seen[in_memory]->summary().step : -1;
  std::vector<std::int64_t> on_disk;
  if (store_) on_disk = store_->complete_steps();

  auto from_memory = [&]() -> bool {
    ShmSlot::Lock shared(seen[in_memory]->path(), false);
    const SlotSummary s = seen[in_memory]->summary();
    if (s.state != SlotState::Complete || s.step != memory_step) return false;  // overwritten meanwhile
    copy_out(*seen[in_memory]);
    result.step = memory_step;
    result.source = RestoreSource::Memory;
    return true;
  };
  if (in_memory >= 0 && (on_disk.empty() || memory_step >= on_disk.front()) && from_memory()) {
    result.seconds = since(t0);
    return result;
  }
  // From disk, newest first, through the slot that does not hold the memory snapshot: the shard
  // is checked against its manifest there, and memory holds it afterwards.
  for (const std::int64_t step : on_disk) {
    if (step <= memory_step) break;
    const auto manifest = store_->manifest(step);
    if (!manifest || manifest->layout_hash != layout_.hash) {
      result.skipped.push_back("step " + std::to_string(step) + ": its manifest is missing or of another buffer layout");
      continue;
    }
    ensure_slots();
    const int keep = newest_slot({&slots_[0], &slots_[1]});
    ShmSlot& target = slots_[keep == 0 ? 1 : 0];
    ShmSlot::Lock exclusive(target.path(), true);
    target.begin_write(step, layout_, options_.rank, options_.world);
    std::string why;
    if (!store_->load(*manifest, target.payload(), target.payload_bytes(), why)) {
      result.skipped.push_back("step " + std::to_string(step) + ": " + why);
      continue;  // the slot stays Writing: never taken
    }
    target.mark_complete();
    copy_out(target);
    result.step = step;
    result.source = RestoreSource::Disk;
    result.seconds = since(t0);
    return result;
  }
  if (in_memory >= 0 && from_memory()) result.seconds = since(t0);
  return result;
}

std::optional<std::int64_t> Engine::persist_newest(const SlotLocation& slots, DiskStore& store, std::int64_t after) {
  ShmSlot seen[2] = {ShmSlot::open_existing(slots.path(0), false), ShmSlot::open_existing(slots.path(1), false)};
  int best = -1;
  for (int i = 0; i < 2; ++i) {
    const SlotSummary s = seen[i].summary();
    if (seen[i].valid() && s.state == SlotState::Complete && s.step > after &&
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

void Engine::persist_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return pending_ || stopping_; });
    if (!pending_ && stopping_) return;
    pending_ = false;
    const std::int64_t after = persisted_step_;
    lock.unlock();
    std::optional<std::int64_t> done;
    std::string error;
    std::int64_t attempted = -1;
    try {
      done = persist_newest(location_, *store_, after);
    } catch (const FlashError& e) {
      error = e.what();
      // The step that failed: the newest complete one in memory.
      ShmSlot a = ShmSlot::open_existing(location_.path(0), false), b = ShmSlot::open_existing(location_.path(1), false);
      attempted = std::max(a.valid() ? a.summary().step : -1, b.valid() ? b.summary().step : -1);
    }
    lock.lock();
    if (done) persisted_step_ = std::max(persisted_step_, *done);
    if (!error.empty()) {
      persist_error_ = error;
      failed_step_ = std::max(failed_step_, attempted);
    }
    changed_.notify_all();
  }
}

bool Engine::wait_persisted(std::int64_t step, double timeout_s) {
  if (!store_) throw FlashError(ErrorKind::Usage, "no persist folder was given");
  if (!options_.persist_in_background) {  // the caller persists in its own thread
    if (const auto done = persist_newest(location_, *store_, persisted_step_)) persisted_step_ = *done;
    return persisted_step_ >= step;
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
