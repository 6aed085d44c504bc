#include "live/backend/cuda_device.hpp"

#include "live/backend/plugin_loader.hpp"

namespace ctwin::live {

CudaDevice::CudaDevice(int device) : plugin_(cuda_plugin()), device_(device) {
  const int count = require_cuda_devices(plugin_);
  if (device < 0 || device >= count)
    throw CannotRunHere("GPU " + std::to_string(device) + " does not exist: " + std::to_string(count) + " visible");
}

DeviceInfo CudaDevice::info() {
  ctwin_device_info raw{};
  check_status(plugin_, plugin_.device_info(device_, &raw), "device info");
  return {raw.name, raw.pci_bus_id, raw.index, raw.memory_total_bytes, raw.memory_used_bytes};
}

double CudaDevice::gemm_flops(int n, int iterations) {
  double flops = 0;
  check_status(plugin_, plugin_.gemm_flops(device_, n, iterations, &flops), "bf16 GEMM");
  return flops;
}

GemmCheck CudaDevice::gemm_check(int n) {
  GemmCheck c;
  check_status(plugin_, plugin_.gemm_check(device_, n, &c.mismatches, &c.non_finite), "GEMM check");
  return c;
}

double CudaDevice::memory_copy_bandwidth(std::size_t bytes, int iterations) {
  double rate = 0;
  check_status(plugin_, plugin_.hbm_copy_bandwidth(device_, bytes, iterations, &rate), "HBM copy");
  return rate;
}

std::pair<double, double> CudaDevice::host_link_bandwidth(std::size_t bytes, int iterations) {
  double h2d = 0, d2h = 0;
  check_status(plugin_, plugin_.pcie_bandwidth(device_, bytes, iterations, &h2d, &d2h), "PCIe copy");
  return {h2d, d2h};
}

std::vector<unsigned char> CudaDevice::make_comm_id() {
  std::vector<unsigned char> id(CTWIN_COMM_ID_BYTES);
  check_status(plugin_, plugin_.comm_make_id(id.data()), "NCCL unique id");
  return id;
}

double CudaDevice::allreduce_seconds(const std::vector<unsigned char>& id, int nranks, int rank, std::size_t bytes,
                                     int iterations, double timeout_s) {
  if (id.size() != CTWIN_COMM_ID_BYTES) throw std::runtime_error("NCCL id of the wrong size");
  double seconds = 0;
  const int status = plugin_.allreduce_seconds(id.data(), nranks, rank, device_, bytes, iterations, timeout_s, &seconds);
  if (status == CTWIN_ERR_TIMEOUT) throw CollectiveTimeout(plugin_.last_error());
  check_status(plugin_, status, "NCCL all-reduce");
  return seconds;
}

}  // namespace ctwin::live
