#pragma once
//! The CPU backend: Eigen fp32 GEMM, memcpy bandwidth, and a sum all-reduce among real processes
//! over TCP (the leader gathers, sums and sends back), all timed for real. It serves the tests and
//! machines without GPUs. Faults can be injected per device to exercise the verdicts: a slow
//! device, a hung collective, corrupted GEMM results, memory already in use.

#include <map>

#include "live/backend/device.hpp"

namespace ctwin::live {

struct CpuFaults {
  double slowdown = 1;         //!< compute takes this many times longer (the extra is slept)
  bool hang = false;           //!< collectives never answer
  bool corrupt = false;        //!< GEMM results come back with flipped elements and a NaN
  double memory_in_use = 0;    //!< fraction of the device memory reported in use before the check
};

class CpuDevice final : public ComputeDevice {
 public:
  explicit CpuDevice(int index = 0, CpuFaults faults = {}) : index_(index), faults_(faults) {}
  ~CpuDevice() override;
  std::string backend() const override { return "cpu"; }
  bool shares_host_cores() const override { return true; }
  DeviceInfo info() override;
  double gemm_flops(int n, int iterations) override;
  GemmCheck gemm_check(int n) override;
  double memory_copy_bandwidth(std::size_t bytes, int iterations) override;
  std::pair<double, double> host_link_bandwidth(std::size_t bytes, int iterations) override;
  std::vector<unsigned char> make_comm_id() override;
  double allreduce_seconds(const std::vector<unsigned char>& id, int nranks, int rank, std::size_t bytes, int iterations,
                           double timeout_s) override;

 private:
  int index_;
  CpuFaults faults_;
  std::map<int, int> listening_;  //!< port -> socket of the ids this device made
};

}  // namespace ctwin::live
