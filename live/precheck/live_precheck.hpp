#pragma once
//! `ctwin live precheck`: the node check before a (re)start, on real devices.
//!  - Each rank checks its own device: memory already in use, GEMM throughput, a GEMM result
//!    check against a reference (silent corruption), device memory copy and host link bandwidth.
//!  - Then DLRover's two rounds, chosen by the policy library's controller (the very code the
//!    simulator's trials call): in each, every group runs a GEMM burn-in and an all-reduce
//!    together; a group's time is its slowest member's, a timeout or any member's failed check
//!    fails the group. The controller's verdict says whom to evict.
//! Ranks meet through a Bootstrap (MPI or forked processes); rank 0 gets the report.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "live/backend/device.hpp"
#include "live/precheck/bootstrap.hpp"
#include "policies/controller.hpp"
#include "policies/precheck.hpp"

namespace ctwin::live {

struct PrecheckOptions {
  int gemm_n = 8192, gemm_iterations = 20;  //!< throughput
  int check_n = 1024;                       //!< result check against the reference
  std::size_t copy_bytes = std::size_t(1) << 30, link_bytes = std::size_t(256) << 20;
  int copy_iterations = 10;
  int burn_in_iterations = 10;              //!< GEMMs of gemm_n in each round's burn-in
  std::size_t allreduce_bytes = std::size_t(64) << 20;
  int allreduce_iterations = 5;
  double timeout_s = 60;                    //!< per round
  double max_memory_in_use = 0.30;          //!< fraction of device memory taken before the check
  double min_of_best = 0.90;                //!< GEMM below this fraction of the best device: straggler
  double expected_flops = 0;                //!< the scenario's GPU peak (0: not compared)
  double min_of_expected = 0.60;            //!< GEMM below this fraction of the peak: straggler
};

//! One rank's own checks (a plain struct: it travels between ranks as bytes).
struct DeviceCheck {
  char host[64] = {};
  char name[96] = {};
  char bus_id[32] = {};
  int rank = 0;
  double memory_in_use = 0;  //!< fraction
  double gemm_flops = 0;
  std::uint64_t mismatches = 0, non_finite = 0;
  double copy_bytes_per_s = 0, h2d_bytes_per_s = 0, d2h_bytes_per_s = 0;
  char error[160] = {};
};

struct RoundResult {
  NodeGroups groups;
  std::vector<double> group_s;       //!< burn-in + all-reduce of the slowest member; timeout if failed
  std::vector<double> allreduce_s;   //!< the group's all-reduce (slowest member); < 0 if failed
  std::vector<double> bus_bytes_per_s;
};

struct RankVerdict {
  std::string verdict = "ok";  //!< ok, straggler, faulty
  std::vector<std::string> reasons;
  bool evict = false;          //!< the controller replaces it
};

struct PrecheckReport {
  std::string backend;
  PrecheckOptions options;
  std::vector<DeviceCheck> devices;  //!< by rank
  std::vector<RoundResult> rounds;
  PrecheckVerdict policy;            //!< the policy library's verdict on the round times
  std::vector<RankVerdict> ranks;
  double best_gemm_flops = 0;
  //! A rank whose verdict is not "ok", evicted or not.
  bool problems() const;
  //! The ranks the controller evicts: what the exit status says (1 when any).
  std::vector<int> evicted() const;
};

//! Runs on every rank; rank 0's report is complete, the others' empty.
PrecheckReport run_live_precheck(Bootstrap& bootstrap, ComputeDevice& device, const control::Controller& controller,
                                 const PrecheckOptions& options);

}  // namespace ctwin::live
