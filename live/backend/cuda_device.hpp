#pragma once
//! A GPU through the CUDA plugin (loaded at run time).

#include "live/backend/ctwin_backend.h"
#include "live/backend/device.hpp"

namespace ctwin::live {

class CudaDevice final : public ComputeDevice {
 public:
  //! Throws CannotRunHere when the plugin or a usable GPU is missing.
  explicit CudaDevice(int device);
  std::string backend() const override { return "cuda"; }
  DeviceInfo info() override;
  double gemm_flops(int n, int iterations) override;
  GemmCheck gemm_check(int n) override;
  double memory_copy_bandwidth(std::size_t bytes, int iterations) override;
  std::pair<double, double> host_link_bandwidth(std::size_t bytes, int iterations) override;
  std::vector<unsigned char> make_comm_id() override;
  double allreduce_seconds(const std::vector<unsigned char>& id, int nranks, int rank, std::size_t bytes, int iterations,
                           double timeout_s) override;

 private:
  const ctwin_backend_v1& plugin_;
  int device_;
};

}  // namespace ctwin::live
