#pragma once
//! The live commands, on real nodes: the node binary's own (`ctwin-live precheck ...`, which links
//! no simulator) and the same under `ctwin live ...`.
//!   precheck [--backend cuda|cpu] [--ranks N] [--policy SCENARIO] [--json PATH] ...
//!   ckpt-bench --persist-dir DIR [--size 1GiB] [--backend cuda|cpu] [--json PATH]
//!   run --policy FILE [--events PATH] [--persist-dir DIR] ... -- TRAINER ARGS...
//! Exit codes: 0 fine, 1 problems found, 2 bad input, 3 cannot run here (docs/cli.md).

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "live/supervisor/supervisor.hpp"
#include "models/scenario.hpp"

namespace ctwin {

class LiveCommands {
 public:
  //! Adds the commands to `parent`. `prefix`: the words between this program and a live command
  //! (" live" for `ctwin live precheck`, "" for `ctwin-live precheck`), for running one again.
  LiveCommands(CLI::App& parent, std::string prefix);
  std::optional<int> dispatch();

 private:
  int precheck();
  int ckpt_bench();
  std::string prefix_;
  CLI::App* precheck_ = nullptr;
  struct PrecheckArgs {
    std::string backend = "cuda", policy, json;
    std::optional<int> ranks, gemm_n, gemm_iterations, check_n;
    std::optional<std::string> copy_bytes, allreduce_bytes, timeout;
    double max_memory_in_use = 0.30, min_of_best = 0.90, min_of_peak = 0.60;
    std::vector<std::string> inject;
  } precheck_args_;
  CLI::App* ckpt_bench_ = nullptr;
  struct CkptBenchArgs {
    std::string backend = "cuda", size = "1GiB", persist_dir, shm_dir = "/dev/shm", json;
    int device = 0, iterations = 3;
  } bench_args_;
  void add_run_command(CLI::App& parent);  //!< live_run_command.cpp
  int run_supervised();
  CLI::App* run_ = nullptr;
  struct RunArgs;
  static void add_supervisor_options(CLI::App* command, RunArgs& args);
  //! The supervisor's options from the command line; non-zero: the exit code of bad input.
  int supervisor_options(const CLI::App& command, const RunArgs& args, live::SupervisorOptions& o) const;
  static int supervise_printing(const Scenario& scenario, const live::SupervisorOptions& o, const std::string& events);
  struct RunArgs {  // NOLINT: also the agent's
    std::string policy, events, name = "ctwin", persist_dir, shm_dir = "/dev/shm", host, kernel_log;
    std::string evict_cmd, reset_gpu_cmd, reboot_cmd, precheck_cmd, precheck_backend = "cuda", metrics = "127.0.0.1:9402";
    std::optional<std::string> hang_minimum, startup_timeout, stop_grace, health_interval;
    int node = 0, max_restarts = 10, flash_ranks = 1;
    bool execute = false, no_nvml = false, no_metrics = false, no_precheck = false, passive = false, warm_standby = false;
    std::vector<std::string> trainer;
  } run_args_;
  // `live master` and `live agent` (live_cluster_commands.cpp): built with cpp-httplib only.
  void add_cluster_commands(CLI::App& parent);
  int run_master();
  int run_agent();
  CLI::App* master_ = nullptr;
  struct MasterArgs {
    std::string policy, bind, token_file, job = "ctwin", events, journal, port_file, metrics = "127.0.0.1:9401", forecast;
    std::optional<std::string> report_interval, agent_timeout, straggler_window, precheck_timeout;
    bool no_metrics = false;
    bool resume = false;  //!< the nodes take the steps another run left in their persist folders
    int nvlink_domain_nodes = 0;
    int nnodes = 1, nproc_per_node = 1, trainer_port = 29500, max_restarts = 10;
    long long total_steps = 0;
  } master_args_;
  CLI::App* agent_ = nullptr;
  RunArgs agent_args_;
  struct AgentArgs {
    std::string master, token_file, address;
    std::optional<std::string> section_interval;
    std::optional<long> node_id;
    bool spare = false;
    std::optional<int> precheck_gemm_n;
    std::optional<std::string> precheck_allreduce_bytes;
    std::string precheck_inject;
  } agent_link_args_;
  CLI::App* pair_check_ = nullptr;
  int run_pair_check();
  struct PairCheckArgs {
    std::string master, key, backend = "cuda", inject;
    int ranks = 1, rank = 0, device = 0;
    std::optional<int> gemm_n, burn_in_iterations;
    std::optional<std::string> allreduce_bytes, timeout;
  } pair_check_args_;
};

//! This node's name: $SLURMD_NODENAME under Slurm, else the host name.
std::string this_host();

}  // namespace ctwin
