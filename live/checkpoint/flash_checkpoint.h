/* The flash checkpoint engine's C API (libctwin_flash.so), for trainers in any language; the
 * Python wrapper ctwin_flash.py calls it through ctypes. See flash_engine.hpp for the design.
 *
 *   h = ctwin_flash_open("job42", "/ckpt", rank, world, keep_last, NULL);
 *   ctwin_flash_register(h, "model", ptr, bytes, device);   (device -1: host memory)
 *   step = ctwin_flash_restore(h, &source);                  (-1: nothing to restore)
 *   ... train ...; ctwin_flash_save(h, step);                 (returns once in shared memory)
 *   ctwin_flash_close(h);                                     (finishes the pending persist)
 *
 * Functions returning int give CTWIN_FLASH_OK or an error kind, with the message in
 * ctwin_flash_error(h). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  CTWIN_FLASH_OK = 0,
  CTWIN_FLASH_ERR_USAGE = 1,
  CTWIN_FLASH_ERR_SHM = 2,     /* /dev/shm too small or unusable */
  CTWIN_FLASH_ERR_PERSIST = 3, /* disk full, or a write failed */
  CTWIN_FLASH_ERR_DEVICE = 4,  /* a GPU copy failed, or the CUDA plugin is missing */
  CTWIN_FLASH_TIMEOUT = 5
};
enum { CTWIN_FLASH_FROM_NONE = 0, CTWIN_FLASH_FROM_MEMORY = 1, CTWIN_FLASH_FROM_DISK = 2 };

typedef struct ctwin_flash ctwin_flash;

/* NULL on failure, with the reason in ctwin_flash_error(NULL). persist_dir NULL or "": memory only;
 * shm_dir NULL: /dev/shm. */
ctwin_flash* ctwin_flash_open(const char* name, const char* persist_dir, int rank, int world, int keep_last,
                              const char* shm_dir);
/* The same, for one shard per replica: replica_ranks ranks make one data-parallel replica (ranks
 * numbered replica by replica) and every replica holds the same state, so only ranks below
 * replica_ranks persist, and rank r restores shard r % replica_ranks from disk (a persist folder
 * every node sees). 0: every rank persists its own, unless $CTWIN_FLASH_REPLICA_RANKS says. */
ctwin_flash* ctwin_flash_open_replicas(const char* name, const char* persist_dir, int rank, int world, int keep_last,
                                       const char* shm_dir, int replica_ranks);
int ctwin_flash_register(ctwin_flash* h, const char* buffer_name, void* ptr, size_t bytes, int device);
/* The same, with what the bytes are ("dtype=float32 shape=64,32"; one line, at most 95 characters),
 * written into every manifest so that a checkpoint on disk describes itself. */
int ctwin_flash_register_described(ctwin_flash* h, const char* buffer_name, void* ptr, size_t bytes, int device,
                                   const char* description);
/* Copies every buffer into shared memory and returns; the disk copy follows in the background.
 * seconds (may be NULL): how long the trainer was stalled. */
int ctwin_flash_save(ctwin_flash* h, int64_t step, double* seconds);
/* The step restored, -1 when there is no checkpoint, -2 on error; source: CTWIN_FLASH_FROM_*.
 * The newest step every rank can restore, ranks compared through the slots this host sees; with
 * ranks on several hosts, agree with ctwin_flash_restorable and restore with ctwin_flash_restore_step. */
int64_t ctwin_flash_restore(ctwin_flash* h, int* source);
/* This rank's restorable steps, newest first: how many there are (at most `capacity` written), -1 on error. */
int ctwin_flash_restorable(ctwin_flash* h, int64_t* steps, int capacity);
/* Restores exactly `step` (from memory, else disk): `step`, -1 when this rank cannot, -2 on error.
 * The job goes on from `step`: this rank's snapshots of newer steps are emptied. `step` -1: from
 * scratch (every snapshot goes; returns -1). */
int64_t ctwin_flash_restore_step(ctwin_flash* h, int64_t step, int* source);
/* OK once `step` is on disk, CTWIN_FLASH_TIMEOUT, or the persist error. */
int ctwin_flash_wait_persisted(ctwin_flash* h, int64_t step, double timeout_s);
int64_t ctwin_flash_persisted_step(ctwin_flash* h);
/* 1 while the background persister's last attempt failed (a full disk, a quota, an I/O error: the
 * step it could not write in *failed_step, why in ctwin_flash_error), 0 otherwise. The snapshots
 * stay in memory; it tries again on a backoff and at each save. */
int ctwin_flash_persist_failing(ctwin_flash* h, int64_t* failed_step);
const char* ctwin_flash_error(ctwin_flash* h);
void ctwin_flash_close(ctwin_flash* h);
/* CRC-32C (Castagnoli) of `bytes` at `data`, continuing `crc` (start with 0): the checksum on each
 * buffer line of a manifest, for readers of a checkpoint on disk (ctwin_flash.read_state_dict). */
uint32_t ctwin_flash_crc32c(uint32_t crc, const void* data, size_t bytes);

#ifdef __cplusplus
}
#endif
