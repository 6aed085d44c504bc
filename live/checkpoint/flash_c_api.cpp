// The C API over flash::Engine: exceptions become error kinds with a message kept per handle.

#include <memory>
#include <string>

#include "live/checkpoint/crc32c.hpp"
#include "live/checkpoint/flash_checkpoint.h"
#include "live/checkpoint/flash_engine.hpp"
#include "live/checkpoint/flash_error.hpp"

struct ctwin_flash {
  std::unique_ptr<ctwin::flash::Engine> engine;
  std::string error;
};

namespace {

thread_local std::string g_open_error;

template <class Body>
int guarded(ctwin_flash* h, Body&& body) {
  if (!h) {
    g_open_error = "a null handle (ctwin_flash_open failed?)";
    return CTWIN_FLASH_ERR_USAGE;
  }
  try {
    body();
    return CTWIN_FLASH_OK;
  } catch (const ctwin::flash::FlashError& e) {
    h->error = e.what();
    return static_cast<int>(e.kind());
  } catch (const std::exception& e) {
    h->error = e.what();
    return CTWIN_FLASH_ERR_USAGE;
  }
}

}  // namespace

extern "C" {

ctwin_flash* ctwin_flash_open(const char* name, const char* persist_dir, int rank, int world, int keep_last,
                              const char* shm_dir) {
  return ctwin_flash_open_replicas(name, persist_dir, rank, world, keep_last, shm_dir, 0);
}

ctwin_flash* ctwin_flash_open_replicas(const char* name, const char* persist_dir, int rank, int world, int keep_last,
                                       const char* shm_dir, int replica_ranks) {
  try {
    ctwin::flash::EngineOptions o;
    o.name = name ? name : "";
    o.persist_dir = persist_dir ? persist_dir : "";
    o.rank = rank;
    o.world = world;
    o.keep_last = keep_last;
    o.replica_ranks = replica_ranks;
    if (shm_dir && *shm_dir) o.shm_dir = shm_dir;
    auto h = std::make_unique<ctwin_flash>();
    h->engine = std::make_unique<ctwin::flash::Engine>(o);
    return h.release();
  } catch (const std::exception& e) {
    g_open_error = e.what();
    return nullptr;
  }
}

int ctwin_flash_register(ctwin_flash* h, const char* buffer_name, void* ptr, size_t bytes, int device) {
  return guarded(h, [&] { h->engine->register_buffer(buffer_name ? buffer_name : "", ptr, bytes, device); });
}

int ctwin_flash_register_described(ctwin_flash* h, const char* buffer_name, void* ptr, size_t bytes, int device, const char* description) {
  return guarded(h, [&] { h->engine->register_buffer(buffer_name ? buffer_name : "", ptr, bytes, device, description ? description : ""); });
}

int ctwin_flash_save(ctwin_flash* h, int64_t step, double* seconds) {
  return guarded(h, [&] {
    const auto stats = h->engine->save(step);
    if (seconds) *seconds = stats.seconds;
  });
}

int64_t ctwin_flash_restore(ctwin_flash* h, int* source) {
  int64_t step = -2;
  if (source) *source = CTWIN_FLASH_FROM_NONE;
  guarded(h, [&] {
    const auto r = h->engine->restore();
    step = r.step;
    if (source) *source = static_cast<int>(r.source);
  });
  return step;
}

int ctwin_flash_restorable(ctwin_flash* h, int64_t* steps, int capacity) {
  int count = -1;
  guarded(h, [&] {
    const auto mine = h->engine->restorable_steps();
    for (int i = 0; i < capacity && i < static_cast<int>(mine.size()); ++i) steps[i] = mine[static_cast<std::size_t>(i)];
    count = static_cast<int>(mine.size());
  });
  return count;
}

int64_t ctwin_flash_restore_step(ctwin_flash* h, int64_t step, int* source) {
  int64_t restored = -2;
  if (source) *source = CTWIN_FLASH_FROM_NONE;
  guarded(h, [&] {
    const auto r = h->engine->restore_step(step);
    restored = r.step;
    if (source) *source = static_cast<int>(r.source);
    if (r.step < 0 && step >= 0) {  // why, naming the shard and the buffer: ctwin_flash_error says it
      h->error.clear();
      for (const auto& why : r.skipped) h->error += (h->error.empty() ? "" : "; ") + why;
      if (h->error.empty()) h->error = "step " + std::to_string(step) + " is not held";
    }
  });
  return restored;
}

int ctwin_flash_wait_persisted(ctwin_flash* h, int64_t step, double timeout_s) {
  bool done = false;
  const int rc = guarded(h, [&] { done = h->engine->wait_persisted(step, timeout_s); });
  return rc != CTWIN_FLASH_OK ? rc : done ? CTWIN_FLASH_OK : CTWIN_FLASH_TIMEOUT;
}

int64_t ctwin_flash_persisted_step(ctwin_flash* h) { return h ? h->engine->persisted_step() : -1; }

int ctwin_flash_persist_failing(ctwin_flash* h, int64_t* failed_step) {
  if (!h) return 0;
  const auto health = h->engine->persist_health();
  if (!health.failing) return 0;
  if (failed_step) *failed_step = health.failed_step;
  h->error = health.error;
  return 1;
}

const char* ctwin_flash_error(ctwin_flash* h) { return h ? h->error.c_str() : g_open_error.c_str(); }

void ctwin_flash_close(ctwin_flash* h) { delete h; }

uint32_t ctwin_flash_crc32c(uint32_t crc, const void* data, size_t bytes) { return ctwin::flash::crc32c(crc, data, bytes); }

}  // extern "C"
