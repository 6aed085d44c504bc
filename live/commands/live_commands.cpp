#include "live/commands/live_commands.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "core/command_line.hpp"
#include "live/backend/cpu_device.hpp"
#include "live/checkpoint/ckpt_bench.hpp"
#include "live/checkpoint/flash_error.hpp"
#include "live/backend/cuda_device.hpp"
#include "live/backend/plugin_loader.hpp"
#include "live/precheck/bootstrap.hpp"
#include "live/precheck/injection.hpp"
#include "live/precheck/live_precheck.hpp"
#include "live/precheck/precheck_report.hpp"
#include "models/scenario_loader.hpp"
#include "core/units.hpp"
#include "policies/recovery_controller.hpp"
#include "core/ranks.hpp"
#include "core/atomic_file.hpp"

namespace ctwin {

namespace {

using cli::kExitCannotRun;

//! The GPU this rank drives: its local rank under mpirun or srun, else its rank.
int local_device(int rank) {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "LOCAL_RANK"})
    if (const char* v = std::getenv(name)) return std::atoi(v);
  return rank;
}

//! "RANK:slow=4", "RANK:hang", "RANK:corrupt", "RANK:memory=0.5" (live/precheck/injection.hpp).
bool parse_injections(const std::vector<std::string>& specs, int ranks, std::map<int, live::CpuFaults>& faults) {
  using Kind = live::Injection::Kind;
  const std::initializer_list<Kind> kinds{Kind::Slow, Kind::Hang, Kind::Corrupt, Kind::Memory};
  for (const auto& spec : specs) {
    const auto colon = spec.find(':');
    char* end = nullptr;
    const long rank = colon == std::string::npos ? -1 : std::strtol(spec.c_str(), &end, 10);
    if (rank < 0 || rank >= ranks || end != spec.c_str() + colon) {
      std::cerr << "ctwin: --inject " << spec << ": rank must be 0 to " << ranks - 1 << "\n";
      return false;
    }
    const auto injection = live::parse_injection(std::string_view(spec).substr(colon + 1), kinds);
    if (!injection) {
      std::cerr << "ctwin: --inject " << spec << ": expected RANK:FAULT, FAULT " << live::injection_choices(kinds)
                << " (slow: F > 1; memory: 0 < F <= 1)\n";
      return false;
    }
    auto& f = faults[static_cast<int>(rank)];
    if (injection->kind == Kind::Slow) f.slowdown = injection->value;
    if (injection->kind == Kind::Hang) f.hang = true;
    if (injection->kind == Kind::Corrupt) f.corrupt = true;
    if (injection->kind == Kind::Memory) f.memory_in_use = injection->value;
  }
  return true;
}

}  // namespace

LiveCommands::LiveCommands(CLI::App& parent, std::string prefix) : prefix_(std::move(prefix)) {
  CLI::App* cmd_ = &parent;
  auto& a = precheck_args_;
  precheck_ = cmd_->add_subcommand("precheck", "check every GPU, then DLRover's two rounds of paired burn-in and all-reduce");
  precheck_->add_option("--backend", a.backend, "cuda (default) or cpu (Eigen and TCP; tests, machines without GPUs)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  precheck_->add_option("--ranks", a.ranks, "processes to fork on this machine (default: one per GPU; cpu: 1); under mpirun, the MPI ranks")
      ->check(CLI::Range(1, 4096));
  precheck_->add_option("--policy", a.policy, "scenario (or policy file) whose policies (precheck) and GPU peak apply");
  precheck_->add_option("--json", a.json, "write the report (JSON) here");
  precheck_->add_option("--gemm-n", a.gemm_n, "GEMM size (default 8192; cpu 256)")->check(CLI::Range(16, 65536));
  precheck_->add_option("--gemm-iterations", a.gemm_iterations, "timed GEMMs (default 20; cpu 10)")->check(CLI::Range(1, 100000));
  precheck_->add_option("--check-n", a.check_n, "size of the GEMM checked against the reference (default 1024; cpu 128)")
      ->check(CLI::Range(16, 16384));
  precheck_->add_option("--copy-bytes", a.copy_bytes, "device memory and host link copies (default 1GiB; cpu 64MiB)");
  precheck_->add_option("--allreduce-bytes", a.allreduce_bytes, "all-reduce size in the rounds (default 64MiB)");
  precheck_->add_option("--timeout", a.timeout, "a round's timeout (default 60s)");
  precheck_->add_option("--max-memory-in-use", a.max_memory_in_use, "fail a GPU with more of its memory in use")->check(CLI::Range(0.0, 1.0));
  precheck_->add_option("--min-of-best", a.min_of_best, "straggler below this fraction of the best GEMM")->check(CLI::Range(0.0, 1.0));
  precheck_->add_option("--min-of-peak", a.min_of_peak, "straggler below this fraction of the scenario's bf16 peak")->check(CLI::Range(0.0, 1.0));
  precheck_->add_option("--inject", a.inject, "cpu backend: RANK:slow=F, RANK:hang, RANK:corrupt, RANK:memory=F");

  auto& b = bench_args_;
  ckpt_bench_ = cmd_->add_subcommand("ckpt-bench", "flash checkpoint throughput against this machine's PCIe (or memcpy) and disk ceilings");
  ckpt_bench_->add_option("--persist-dir", b.persist_dir, "folder the checkpoints persist to (on the disk to measure)")->required();
  ckpt_bench_->add_option("--size", b.size, "checkpoint size (default 1GiB); /dev/shm needs three times this (the ceiling's mapping and two slots)");
  ckpt_bench_->add_option("--backend", b.backend, "cuda (default: a GPU buffer) or cpu (a host buffer)")->check(CLI::IsMember({"cuda", "cpu"}));
  ckpt_bench_->add_option("--device", b.device, "GPU index")->check(CLI::Range(0, 1023));
  ckpt_bench_->add_option("--iterations", b.iterations, "each figure is the best of these")->check(CLI::Range(1, 1000));
  ckpt_bench_->add_option("--shm-dir", b.shm_dir, "shared-memory folder (default /dev/shm)");
  ckpt_bench_->add_option("--json", b.json, "write the figures (JSON) here");
  add_run_command(parent);
#ifdef CTWIN_HAVE_CLUSTER
  add_cluster_commands(parent);
#endif
}

std::optional<int> LiveCommands::dispatch() {
  if (*precheck_) {
    if (!cli::check_output_path("--json", precheck_args_.json)) return cli::kExitBadInput;
    return cli::run_reporting_errors([this] { return precheck(); });
  }
  if (*run_) {
    if (!cli::check_output_path("--events", run_args_.events)) return cli::kExitBadInput;
    return cli::run_reporting_errors([this] { return run_supervised(); });
  }
#ifdef CTWIN_HAVE_CLUSTER
  if (master_ && *master_) {
    for (const auto& [flag, path] : {std::pair{"--events", master_args_.events}, std::pair{"--journal", master_args_.journal}})
      if (!cli::check_output_path(flag, path)) return cli::kExitBadInput;
    return cli::run_reporting_errors([this] { return run_master(); });
  }
  if (pair_check_ && *pair_check_) return cli::run_reporting_errors([this] { return run_pair_check(); });
  if (agent_ && *agent_) {
    return cli::run_reporting_errors([this] { return run_agent(); });
  }
#endif
  if (*ckpt_bench_) {
    if (!cli::check_output_path("--json", bench_args_.json)) return cli::kExitBadInput;
    return cli::run_reporting_errors([this] { return ckpt_bench(); });
  }
  return std::nullopt;
}

int LiveCommands::precheck() {
  const auto& a = precheck_args_;
  const bool cpu = a.backend == "cpu";
  Scenario scenario;
  if (!a.policy.empty()) scenario = load_policies_or_scenario(a.policy);  // ScenarioInvalid: exit 2
  const RecoveryController controller(scenario);

  live::PrecheckOptions o;
  if (cpu) {
    o.gemm_n = 256;
    o.gemm_iterations = 10;
    o.check_n = 128;
    o.copy_bytes = o.link_bytes = std::size_t(64) << 20;
    o.copy_iterations = 5;
    o.allreduce_iterations = 3;
  } else {
    o.expected_flops = scenario.cluster.gpu_peak_bf16_flops;
  }
  o.gemm_n = a.gemm_n.value_or(o.gemm_n);
  o.gemm_iterations = a.gemm_iterations.value_or(o.gemm_iterations);
  o.check_n = a.check_n.value_or(o.check_n);
  o.max_memory_in_use = a.max_memory_in_use;
  o.min_of_best = a.min_of_best;
  o.min_of_expected = a.min_of_peak;
  if (!cli::parse_size(a.copy_bytes, "--copy-bytes", o.copy_bytes)) return cli::kExitBadInput;
  o.link_bytes = std::min(o.link_bytes, o.copy_bytes);
  if (!cli::parse_size(a.allreduce_bytes, "--allreduce-bytes", o.allreduce_bytes)) return cli::kExitBadInput;
  if (!cli::parse_positive_seconds(a.timeout, "--timeout", o.timeout_s)) return cli::kExitBadInput;

  const bool under_mpi = Ranks::world().size() > 1;
  int ranks = under_mpi ? Ranks::world().size() : a.ranks.value_or(1);
  std::map<int, live::CpuFaults> faults;
  if (!a.inject.empty() && !cpu) {
    std::cerr << "ctwin: --inject works with --backend cpu only\n";
    return cli::kExitBadInput;
  }
  if (!parse_injections(a.inject, ranks, faults)) return cli::kExitBadInput;
  if (!cpu && !under_mpi) {
    int gpus = 0;
    try {
      gpus = live::probe_cuda_devices_in_child();
    } catch (const CannotRunHere& e) {
      std::cerr << "ctwin: cannot run here: " << e.what() << "\n";
      return kExitCannotRun;
    }
    ranks = a.ranks.value_or(gpus);
    if (ranks > gpus) {
      std::cerr << "ctwin: --ranks " << ranks << ": this machine has " << gpus << " GPU(s), and NCCL refuses two ranks on one GPU\n";
      return cli::kExitBadInput;
    }
  }

  if (cpu && !under_mpi && ranks > static_cast<int>(std::thread::hardware_concurrency()))
    std::cerr << "ctwin: warning: " << ranks << " ranks on " << std::thread::hardware_concurrency()
              << " cores: the ranks' timings disturb each other, so slow-GEMM and burn-in verdicts are less sure\n";

  std::unique_ptr<live::LocalBootstrap> local;
  std::unique_ptr<live::Bootstrap> mpi;
  live::Bootstrap* boot = nullptr;
  if (under_mpi) boot = (mpi = live::mpi_bootstrap()).get();
  else boot = (local = live::LocalBootstrap::fork_ranks(ranks)).get();
  const int rank = boot->rank();

  live::PrecheckReport report;
  try {
    std::unique_ptr<live::ComputeDevice> device;
    if (cpu) device = std::make_unique<live::CpuDevice>(rank, faults[rank]);
    else device = std::make_unique<live::CudaDevice>(under_mpi ? local_device(rank) : rank);
    report = live::run_live_precheck(*boot, *device, controller, o);
  } catch (const CannotRunHere& e) {
    std::cerr << "ctwin: rank " << rank << ": cannot run here: " << e.what() << "\n";
    if (local && rank != 0) local->finish(kExitCannotRun);
    return kExitCannotRun;
  } catch (const std::exception& e) {
    std::cerr << "ctwin: rank " << rank << ": " << e.what() << "\n";
    if (local && rank != 0) local->finish(cli::kExitFailure);
    throw;
  }
  if (rank != 0) {
    if (local) local->finish(0);
    return 0;
  }
  if (local && !local->finish(0)) std::cerr << "ctwin: warning: a forked rank did not exit cleanly\n";
  std::cout << live::precheck_table(report);
  if (!a.json.empty()) write_file_atomically(a.json, live::precheck_json(report).dump(2) + "\n");
  return report.evicted().empty() ? 0 : cli::kExitFailure;
}

int LiveCommands::ckpt_bench() {
  const auto& b = bench_args_;
  flash::CkptBenchOptions o;
  std::string why;
  const auto bytes = parse_bytes(b.size, why);
  if (!bytes || *bytes < 4096) {
    std::cerr << "ctwin: --size " << b.size << ": " << (why.empty() ? "at least 4KiB" : why) << "\n";
    return cli::kExitBadInput;
  }
  if (!std::filesystem::is_directory(b.persist_dir) || !std::filesystem::is_directory(b.shm_dir)) {
    std::cerr << "ctwin: " << (std::filesystem::is_directory(b.shm_dir) ? "--persist-dir " + b.persist_dir : "--shm-dir " + b.shm_dir)
              << ": not a folder\n";
    return cli::kExitBadInput;
  }
  o.bytes = static_cast<std::uint64_t>(*bytes);
  o.device = b.backend == "cuda" ? b.device : -1;
  o.persist_dir = b.persist_dir;
  o.shm_dir = b.shm_dir;
  o.iterations = b.iterations;
  o.progress = [](const std::string& line) { std::cerr << line << std::endl; };  // a long run is not silent
  flash::CkptBenchResult r;
  try {
    r = flash::run_ckpt_bench(o);  // CannotRunHere: exit 3 through run_reporting_errors
  } catch (const flash::FlashError& e) {
    std::cerr << "ctwin: " << e.what() << "\n";
    return e.kind() == flash::ErrorKind::Usage ? cli::kExitBadInput : cli::kExitFailure;
  }
  std::cout << flash::ckpt_bench_text(r);
  if (!b.json.empty()) write_file_atomically(b.json, flash::ckpt_bench_json(r));
  return 0;
}

}  // namespace ctwin
