/* The C interface between the live core and a compute backend plugin (libctwin_cuda.so).
 *
 * The core never links CUDA: it dlopens the plugin and asks `ctwin_backend_v1()` for this table.
 * Plain C, so that the plugin builds with nothing but CMake, the CUDA toolkit and NCCL.
 * Every function returns 0 on success, else a nonzero code with a message in `last_error()`.
 * Bandwidths are bytes per second, throughputs FLOP per second, times seconds. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTWIN_BACKEND_ABI_VERSION 1
#define CTWIN_COMM_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */

enum ctwin_status {
  CTWIN_OK = 0,
  CTWIN_ERR_NO_DEVICE = 1,     /* no GPU visible, or the driver is missing */
  CTWIN_ERR_DRIVER_TOO_OLD = 2,/* the driver is older than the runtime the plugin carries */
  CTWIN_ERR_RUNTIME = 3,       /* any other CUDA, cuBLAS or NCCL error */
  CTWIN_ERR_TIMEOUT = 4
};

typedef struct ctwin_device_info {
  char name[96];
  char pci_bus_id[32];
  int index;
  int sm_major, sm_minor;
  uint64_t memory_total_bytes;
  uint64_t memory_used_bytes; /* in use before the check started, by anyone */
} ctwin_device_info;

typedef struct ctwin_backend_v1 {
  int abi_version; /* CTWIN_BACKEND_ABI_VERSION */
  const char* (*last_error)(void);
  /* driver and runtime as CUDA encodes them (12040 = 12.4); 0 when there is no driver */
  int (*versions)(int* driver_version, int* runtime_version);
  int (*device_count)(int* count);
  int (*device_info)(int device, ctwin_device_info* info);
  /* bf16 GEMM n x n x n (fp32 accumulation), `iterations` timed after a warm-up */
  int (*gemm_flops)(int device, int n, int iterations, double* flops_per_s);
  /* bf16 GEMM of n x n against an fp32 reference on the device: elements off by more than the
   * bf16 tolerance, and NaN/Inf elements (silent data corruption, broken tensor cores) */
  int (*gemm_check)(int device, int n, uint64_t* mismatches, uint64_t* non_finite);
  /* device-to-device copy bandwidth (HBM: bytes read + written per second / 2 = copy rate) */
  int (*hbm_copy_bandwidth)(int device, size_t bytes, int iterations, double* bytes_per_s);
  /* pinned host <-> device */
  int (*pcie_bandwidth)(int device, size_t bytes, int iterations, double* h2d_bytes_per_s, double* d2h_bytes_per_s);
  /* Collectives: the group's leader makes an id, the bootstrap hands it to the members. */
  int (*comm_make_id)(unsigned char id[CTWIN_COMM_ID_BYTES]);
  /* sum all-reduce of `bytes` (bf16) among `nranks`, `iterations` timed: seconds per all-reduce */
  int (*allreduce_seconds)(const unsigned char id[CTWIN_COMM_ID_BYTES], int nranks, int rank, int device, size_t bytes,
                           int iterations, double timeout_s, double* seconds);
  /* memory for the flash checkpoint engine */
  int (*device_alloc)(int device, size_t bytes, void** ptr);
  int (*device_free)(void* ptr);
  int (*device_fill)(void* ptr, size_t bytes, unsigned char value);
  int (*host_register)(void* ptr, size_t bytes); /* page-lock shared memory for full-speed DMA */
  int (*host_unregister)(void* ptr);
  int (*copy_to_host)(void* dst, const void* src, size_t bytes);
  int (*copy_to_device)(void* dst, const void* src, size_t bytes);
  /* which device a pointer lives on (-1: host memory) */
  int (*pointer_device)(const void* ptr, int* device);
} ctwin_backend_v1;

/* The plugin's one exported symbol. */
typedef const ctwin_backend_v1* (*ctwin_backend_entry_fn)(void);
#define CTWIN_BACKEND_ENTRY "ctwin_backend_entry_v1"

#ifdef __cplusplus
}
#endif
