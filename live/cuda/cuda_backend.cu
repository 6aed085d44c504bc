// The CUDA backend plugin: cuBLAS GEMM burn-in and check, HBM and PCIe bandwidth, NCCL all-reduce,
// and the device copies of the flash checkpoint engine, behind the C table of ctwin_backend.h.
// cudart is linked statically; cuBLAS and NCCL are shared libraries found at load time. The core
// dlopens this file, so a machine without CUDA never needs any of it.

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "live/backend/ctwin_backend.h"

namespace {

thread_local std::string g_error;

int fail(int code, const std::string& what) {
  g_error = what;
  return code;
}

#define CUDA_TRY(call)                                                                              \
  do {                                                                                              \
    cudaError_t e_ = (call);                                                                        \
    if (e_ != cudaSuccess) return fail(CTWIN_ERR_RUNTIME, std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)

#define CUBLAS_TRY(call)                                                                            \
  do {                                                                                              \
    cublasStatus_t s_ = (call);                                                                     \
    if (s_ != CUBLAS_STATUS_SUCCESS) return fail(CTWIN_ERR_RUNTIME, std::string(#call) + ": " + cublasGetStatusString(s_)); \
  } while (0)

//! Frees whatever was allocated on every path out of a function.
struct DeviceBuffers {
  void* p[4] = {nullptr, nullptr, nullptr, nullptr};
  void* host = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cublasHandle_t blas = nullptr;
  ~DeviceBuffers() {
    for (void* q : p)
      if (q) cudaFree(q);
    if (host) cudaFreeHost(host);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (blas) cublasDestroy(blas);
  }
};

const char* last_error() { return g_error.c_str(); }

int versions(int* driver, int* runtime) {
  *driver = 0;
  *runtime = 0;
  cudaDriverGetVersion(driver);  // 0 without a driver
  CUDA_TRY(cudaRuntimeGetVersion(runtime));
  return CTWIN_OK;
}

int device_count(int* count) {
  *count = 0;
  const cudaError_t e = cudaGetDeviceCount(count);
  if (e == cudaErrorInsufficientDriver) return fail(CTWIN_ERR_DRIVER_TOO_OLD, cudaGetErrorString(e));
  if (e == cudaErrorNoDevice || e == cudaErrorInitializationError || *count == 0)
    return fail(CTWIN_ERR_NO_DEVICE, e == cudaSuccess ? "no CUDA device" : cudaGetErrorString(e));
  if (e != cudaSuccess) return fail(CTWIN_ERR_RUNTIME, cudaGetErrorString(e));
  return CTWIN_OK;
}

int device_info(int device, ctwin_device_info* info) {
  std::memset(info, 0, sizeof *info);
  cudaDeviceProp prop{};
  CUDA_TRY(cudaGetDeviceProperties(&prop, device));
  std::snprintf(info->name, sizeof info->name, "%.*s", int(sizeof info->name) - 1, prop.name);
  CUDA_TRY(cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, device));
  info->index = device;
  info->sm_major = prop.major;
  info->sm_minor = prop.minor;
  CUDA_TRY(cudaSetDevice(device));
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  info->memory_total_bytes = total_bytes;
  info->memory_used_bytes = total_bytes - free_bytes;  // includes this process's own context
  return CTWIN_OK;
}

//! Deterministic values in [-1, 1) from the element index, so every GPU multiplies the same matrices.
__global__ void fill_bf16(__nv_bfloat16* x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = __float2bfloat16(static_cast<float>(h & 0xffff) / 32768.0f - 1.0f);
  }
}

//! fp32 reference of C = A^T... column-major as cuBLAS: C[i + j n] = sum_k A[i + k n] B[k + j n];
//! also the sum of |products|, which bounds the rounding error.
__global__ void reference_gemm(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, float* magnitude, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  if (i >= n) return;
  float sum = 0, mag = 0;
  for (int k = 0; k < n; ++k) {
    const float p = __bfloat162float(a[i + size_t(k) * n]) * __bfloat162float(b[k + size_t(j) * n]);
    sum += p;
    mag += fabsf(p);
  }
  c[i + size_t(j) * n] = sum;
  magnitude[i + size_t(j) * n] = mag;
}

__global__ void compare(const float* got, const float* want, const float* magnitude, size_t n,
                        unsigned long long* mismatches, unsigned long long* non_finite) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const float g = got[i];
    if (!isfinite(g)) atomicAdd(non_finite, 1ull);
    else if (fabsf(g - want[i]) > 1e-3f * magnitude[i] + 1e-5f) atomicAdd(mismatches, 1ull);
  }
}

int gemm_flops(int device, int n, int iterations, double* flops_per_s) {
  CUDA_TRY(cudaSetDevice(device));
  DeviceBuffers d;
  const size_t elems = size_t(n) * n;
  for (int i = 0; i < 3; ++i) CUDA_TRY(cudaMalloc(&d.p[i], elems * sizeof(__nv_bfloat16)));
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(d.p[0]), elems, 1);
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(d.p[1]), elems, 2);
  CUBLAS_TRY(cublasCreate(&d.blas));
  const float alpha = 1, beta = 0;
  auto run = [&] {
    return cublasGemmEx(d.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d.p[0], CUDA_R_16BF, n, d.p[1], CUDA_R_16BF, n,
                        &beta, d.p[2], CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  for (int i = 0; i < 3; ++i) CUBLAS_TRY(run());  // warm-up: heuristics, clocks
  CUDA_TRY(cudaEventCreate(&d.start));
  CUDA_TRY(cudaEventCreate(&d.stop));
  CUDA_TRY(cudaEventRecord(d.start));
  for (int i = 0; i < iterations; ++i) CUBLAS_TRY(run());
  CUDA_TRY(cudaEventRecord(d.stop));
  CUDA_TRY(cudaEventSynchronize(d.stop));
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, d.start, d.stop));
  *flops_per_s = 2.0 * double(n) * n * n * iterations / (ms / 1e3);
  return CTWIN_OK;
}

int gemm_check(int device, int n, uint64_t* mismatches, uint64_t* non_finite) {
  CUDA_TRY(cudaSetDevice(device));
  DeviceBuffers d;
  const size_t elems = size_t(n) * n;
  CUDA_TRY(cudaMalloc(&d.p[0], elems * sizeof(__nv_bfloat16)));
  CUDA_TRY(cudaMalloc(&d.p[1], elems * sizeof(__nv_bfloat16)));
  CUDA_TRY(cudaMalloc(&d.p[2], elems * sizeof(float) * 3));  // cuBLAS result, reference, magnitude
  CUDA_TRY(cudaMalloc(&d.p[3], 2 * sizeof(unsigned long long)));
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(d.p[0]), elems, 3);
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(d.p[1]), elems, 4);
  float* got = static_cast<float*>(d.p[2]);
  float* want = got + elems;
  float* magnitude = want + elems;
  CUBLAS_TRY(cublasCreate(&d.blas));
  const float alpha = 1, beta = 0;
  CUBLAS_TRY(cublasGemmEx(d.blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d.p[0], CUDA_R_16BF, n, d.p[1], CUDA_R_16BF,
                          n, &beta, got, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  reference_gemm<<<dim3((n + 127) / 128, n), 128>>>(static_cast<const __nv_bfloat16*>(d.p[0]),
                                                    static_cast<const __nv_bfloat16*>(d.p[1]), want, magnitude, n);
  auto* counters = static_cast<unsigned long long*>(d.p[3]);
  CUDA_TRY(cudaMemset(counters, 0, 2 * sizeof(unsigned long long)));
  compare<<<1024, 256>>>(got, want, magnitude, elems, counters, counters + 1);
  unsigned long long host[2] = {0, 0};
  CUDA_TRY(cudaMemcpy(host, counters, sizeof host, cudaMemcpyDeviceToHost));
  *mismatches = host[0];
  *non_finite = host[1];
  return CTWIN_OK;
}

//! Times `iterations` copies of `kind` with events: bytes per second.
int time_copies(void* dst, const void* src, size_t bytes, int iterations, cudaMemcpyKind kind, DeviceBuffers& d,
                double* bytes_per_s) {
  CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind));  // warm-up
  if (!d.start) CUDA_TRY(cudaEventCreate(&d.start));
  if (!d.stop) CUDA_TRY(cudaEventCreate(&d.stop));
  CUDA_TRY(cudaEventRecord(d.start));
  for (int i = 0; i < iterations; ++i) CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind));
  CUDA_TRY(cudaEventRecord(d.stop));
  CUDA_TRY(cudaEventSynchronize(d.stop));
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, d.start, d.stop));
  *bytes_per_s = double(bytes) * iterations / (ms / 1e3);
  return CTWIN_OK;
}

int hbm_copy_bandwidth(int device, size_t bytes, int iterations, double* bytes_per_s) {
  CUDA_TRY(cudaSetDevice(device));
  DeviceBuffers d;
  CUDA_TRY(cudaMalloc(&d.p[0], bytes));
  CUDA_TRY(cudaMalloc(&d.p[1], bytes));
  return time_copies(d.p[1], d.p[0], bytes, iterations, cudaMemcpyDeviceToDevice, d, bytes_per_s);
}

int pcie_bandwidth(int device, size_t bytes, int iterations, double* h2d, double* d2h) {
  CUDA_TRY(cudaSetDevice(device));
  DeviceBuffers d;
  CUDA_TRY(cudaMalloc(&d.p[0], bytes));
  CUDA_TRY(cudaMallocHost(&d.host, bytes));
  std::memset(d.host, 1, bytes);
  if (const int rc = time_copies(d.p[0], d.host, bytes, iterations, cudaMemcpyHostToDevice, d, h2d)) return rc;
  return time_copies(d.host, d.p[0], bytes, iterations, cudaMemcpyDeviceToHost, d, d2h);
}

int comm_make_id(unsigned char id[CTWIN_COMM_ID_BYTES]) {
  static_assert(sizeof(ncclUniqueId) == CTWIN_COMM_ID_BYTES, "NCCL unique id size");
  ncclUniqueId unique;
  const ncclResult_t r = ncclGetUniqueId(&unique);
  if (r != ncclSuccess) return fail(CTWIN_ERR_RUNTIME, std::string("ncclGetUniqueId: ") + ncclGetErrorString(r));
  std::memcpy(id, &unique, sizeof unique);
  return CTWIN_OK;
}

//! Waits for a non-blocking communicator's pending work; aborts it past the deadline.
int wait_comm(ncclComm_t comm, cudaStream_t stream, std::chrono::steady_clock::time_point deadline, const char* what) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclCommGetAsyncError(comm, &state);
    const cudaError_t done = stream ? cudaStreamQuery(stream) : cudaSuccess;
    if (state != ncclSuccess && state != ncclInProgress) {
      ncclCommAbort(comm);
      return fail(CTWIN_ERR_RUNTIME, std::string(what) + ": " + ncclGetErrorString(state));
    }
    if (state == ncclSuccess && done == cudaSuccess) return CTWIN_OK;
    if (done != cudaSuccess && done != cudaErrorNotReady) {
      ncclCommAbort(comm);
      return fail(CTWIN_ERR_RUNTIME, std::string(what) + ": " + cudaGetErrorString(done));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ncclCommAbort(comm);
      return fail(CTWIN_ERR_TIMEOUT, std::string(what) + ": timed out");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

int allreduce_seconds(const unsigned char id[CTWIN_COMM_ID_BYTES], int nranks, int rank, int device, size_t bytes,
                      int iterations, double timeout_s, double* seconds) {
  CUDA_TRY(cudaSetDevice(device));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(timeout_s));
  DeviceBuffers d;
  const size_t count = bytes / sizeof(__nv_bfloat16);
  CUDA_TRY(cudaMalloc(&d.p[0], count * sizeof(__nv_bfloat16)));
  fill_bf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(d.p[0]), count, 5);
  cudaStream_t stream = nullptr;
  CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  ncclUniqueId unique;
  std::memcpy(&unique, id, sizeof unique);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // so that a dead peer is a timeout, not a hang
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, unique, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) {
    cudaStreamDestroy(stream);
    return fail(CTWIN_ERR_RUNTIME, std::string("ncclCommInitRankConfig: ") + ncclGetErrorString(r));
  }
  int rc = wait_comm(comm, nullptr, deadline, "NCCL init");
  auto launch = [&] {
    return ncclAllReduce(d.p[0], d.p[0], count, ncclBfloat16, ncclSum, comm, stream);
  };
  if (rc == CTWIN_OK) {
    launch();  // warm-up: connections are made lazily
    rc = wait_comm(comm, stream, deadline, "NCCL all-reduce");
  }
  if (rc == CTWIN_OK) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) launch();
    rc = wait_comm(comm, stream, deadline, "NCCL all-reduce");
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iterations;
  }
  if (rc == CTWIN_OK) ncclCommDestroy(comm);  // wait_comm aborted it otherwise
  cudaStreamDestroy(stream);
  return rc;
}

int device_alloc(int device, size_t bytes, void** ptr) {
  CUDA_TRY(cudaSetDevice(device));
  CUDA_TRY(cudaMalloc(ptr, bytes));
  return CTWIN_OK;
}
int device_free(void* ptr) {
  CUDA_TRY(cudaFree(ptr));
  return CTWIN_OK;
}
int device_fill(void* ptr, size_t bytes, unsigned char value) {
  CUDA_TRY(cudaMemset(ptr, value, bytes));
  CUDA_TRY(cudaDeviceSynchronize());
  return CTWIN_OK;
}
int host_register(void* ptr, size_t bytes) {
  CUDA_TRY(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
  return CTWIN_OK;
}
int host_unregister(void* ptr) {
  CUDA_TRY(cudaHostUnregister(ptr));
  return CTWIN_OK;
}
int copy_to_host(void* dst, const void* src, size_t bytes) {
  CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  return CTWIN_OK;
}
int copy_to_device(void* dst, const void* src, size_t bytes) {
  CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  return CTWIN_OK;
}
int pointer_device(const void* ptr, int* device) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
    cudaGetLastError();  // clear: an unknown pointer is host memory
    *device = -1;
    return CTWIN_OK;
  }
  *device = attributes.type == cudaMemoryTypeDevice ? attributes.device : -1;
  return CTWIN_OK;
}

const ctwin_backend_v1 table = {
    CTWIN_BACKEND_ABI_VERSION, last_error,      versions,       device_count,     device_info,    gemm_flops,
    gemm_check,                hbm_copy_bandwidth, pcie_bandwidth, comm_make_id, allreduce_seconds, device_alloc,
    device_free,               device_fill,     host_register,  host_unregister,  copy_to_host,   copy_to_device,
    pointer_device};

}  // namespace

extern "C" __attribute__((visibility("default"))) const ctwin_backend_v1* ctwin_backend_entry_v1() { return &table; }
