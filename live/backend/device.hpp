#pragma once
//! One accelerator and its collectives, as the precheck and the checkpoint benchmark use them:
//! the CUDA plugin on GPUs (cuda_device.hpp), Eigen and TCP sockets on CPUs (cpu_device.hpp), so
//! that tests and machines without GPUs run the same code paths with real timings.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ctwin::live {

struct DeviceInfo {
  std::string name;
  std::string bus_id;
  int index = 0;
  std::uint64_t memory_total_bytes = 0;
  std::uint64_t memory_used_bytes = 0;
};

struct GemmCheck {
  std::uint64_t mismatches = 0;  //!< elements off the reference by more than the rounding bound
  std::uint64_t non_finite = 0;  //!< NaN or Inf
};

//! A collective that did not finish within its timeout (a dead or hung peer).
class CollectiveTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ComputeDevice {
 public:
  virtual ~ComputeDevice() = default;
  virtual std::string backend() const = 0;  //!< "cuda" or "cpu"
  //! Devices of one host that share its cores (CPU backend): their own checks run one at a time,
  //! or they would measure each other.
  virtual bool shares_host_cores() const { return false; }
  virtual DeviceInfo info() = 0;
  //! Dense GEMM n x n x n (bf16 on GPUs, fp32 on CPUs), FLOP/s over `iterations`.
  virtual double gemm_flops(int n, int iterations) = 0;
  virtual GemmCheck gemm_check(int n) = 0;
  //! Device memory copy rate, bytes copied per second.
  virtual double memory_copy_bandwidth(std::size_t bytes, int iterations) = 0;
  //! Host to device and device to host, bytes per second (pinned host memory on GPUs).
  virtual std::pair<double, double> host_link_bandwidth(std::size_t bytes, int iterations) = 0;

  //! Collectives: the group's leader makes an id; the bootstrap hands it to the members.
  virtual std::vector<unsigned char> make_comm_id() = 0;
  //! Seconds per sum all-reduce of `bytes` among `nranks` (this one is `rank`); throws
  //! CollectiveTimeout past `timeout_s`.
  virtual double allreduce_seconds(const std::vector<unsigned char>& id, int nranks, int rank, std::size_t bytes,
                                   int iterations, double timeout_s) = 0;
};

}  // namespace ctwin::live
