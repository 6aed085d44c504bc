// `ctwin-live run` (and `ctwin live run`): the supervisor (live/supervisor/supervisor.hpp) from the command line.
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <unistd.h>

#include "core/command_line.hpp"
#include "live/commands/live_commands.hpp"
#include "live/job/local_coordination.hpp"
#include "live/supervisor/supervisor.hpp"
#include "models/scenario_loader.hpp"
#include "core/units.hpp"
#include "policies/recovery_controller.hpp"

namespace ctwin {

namespace {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string this_host() {
  if (const char* name = std::getenv("SLURMD_NODENAME"); name && *name) return name;
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

void LiveCommands::add_run_command(CLI::App& parent) {
  run_ = parent.add_subcommand("run", "supervise a trainer with the policies a scenario (or policy file) gives: restart, restore, evict");
  add_supervisor_options(run_, run_args_);
  // The job's books are its master's: here the one in this process (an agent's are its master's).
  run_->add_option("--events", run_args_.events, "the job's event log (CSV, docs/event-log.md) for ctwin validate");
}

void LiveCommands::add_supervisor_options(CLI::App* command, RunArgs& a) {
  CLI::App* const run = command;
  run->add_option("--policy", a.policy, "scenario, or a policy file ({\"schema_version\": 1, \"policies\": {...}})")->required();
  run->add_option("--name", a.name, "the trainer's flash checkpoint name ($CTWIN_FLASH_NAME)");
  run->add_option("--persist-dir", a.persist_dir, "the trainer's checkpoint folder ($CTWIN_FLASH_PERSIST_DIR)");
  run->add_option("--shm-dir", a.shm_dir, "shared-memory folder ($CTWIN_SHM_DIR)");
  run->add_option("--flash-ranks", a.flash_ranks, "trainer ranks on this node that keep flash slots")->check(CLI::Range(1, 4096));
  run->add_option("--node-index", a.node, "this node's index in the event log (default: $SLURM_NODEID, else 0)")->check(CLI::Range(0, 1000000));
  run->add_option("--host", a.host, "this node's name for {host} in commands (default: $SLURMD_NODENAME, else the host name)");
  run->add_option("--max-restarts", a.max_restarts, "give up (exit 1) after this many restarts")->check(CLI::Range(0, 100000));
  run->add_option("--hang-timeout-min", a.hang_minimum, "the hang timeout's floor (default: the policy's hang_detection, else 60s)");
  run->add_option("--startup-timeout", a.startup_timeout, "launch to restored (default 30min)");
  run->add_option("--stop-grace", a.stop_grace, "SIGTERM to SIGKILL when stopping the trainer (default 60s)");
  run->add_option("--health-interval", a.health_interval, "NVML poll interval (default 1s)");
  run->add_flag("--no-nvml", a.no_nvml, "do not read GPU health from NVML");
  run->add_option("--kernel-log", a.kernel_log, "file or FIFO of kernel messages to watch for Xid lines (e.g. /var/log/kern.log)");
  run->add_option("--evict-cmd", a.evict_cmd, "command that takes this node out: {node} {host} {gpu}");
  run->add_option("--reset-gpu-cmd", a.reset_gpu_cmd, "command that resets a GPU");
  run->add_option("--reboot-cmd", a.reboot_cmd, "command that reboots this node");
  run->add_flag("--execute", a.execute, "run those commands (default: dry-run, logged only)");
  run->add_option("--precheck-cmd", a.precheck_cmd, "node check before a restart (default, when the policy enables it: ctwin live precheck)");
  run->add_option("--precheck-backend", a.precheck_backend, "backend of the default precheck")->check(CLI::IsMember({"cuda", "cpu"}));
  run->add_flag("--no-precheck", a.no_precheck, "restart without the node check the policy asks for");
  run->add_option("--metrics", a.metrics, "Prometheus endpoint HOST:PORT (default 127.0.0.1:9402; port 0: any free port)");
  run->add_flag("--no-metrics", a.no_metrics, "no Prometheus endpoint");
  run->add_flag("--passive", a.passive, "a trainer that sends no heartbeats: its output's step lines (Megatron-LM, tqdm bars) stand in for them");
  run->add_flag("--warm-standby", a.warm_standby,
                "keep one trainer process started ahead, for a launcher that takes it (build/ctwin_ranks.py): a relaunch skips its start and imports");
  run->add_option("trainer", a.trainer, "the trainer's command line, after --")->required();
}

int LiveCommands::run_supervised() {
  const Scenario scenario = load_policies_or_scenario(run_args_.policy);  // ScenarioInvalid: exit 2
  live::SupervisorOptions o;
  if (const int bad = supervisor_options(*run_, run_args_, o)) return bad;
  return supervise_printing(scenario, o, run_args_.events);
}

int LiveCommands::supervisor_options(const CLI::App& command, const RunArgs& a, live::SupervisorOptions& o) const {
  const Scenario scenario = load_policies_or_scenario(a.policy);
  o.trainer = a.trainer;
  o.node = a.node;
  o.host = a.host;
  // Under Slurm the node's identity comes from its step: SLURM_NODEID and SLURMD_NODENAME, unless given.
  if (!command.count("--node-index"))
    if (const char* id = std::getenv("SLURM_NODEID"); id && *id) {
      char* end = nullptr;
      const long n = std::strtol(id, &end, 10);
      if (*end == '\0' && n >= 0 && n <= 1'000'000) o.node = static_cast<int>(n);
    }
  if (o.host.empty())
    if (const char* name = std::getenv("SLURMD_NODENAME"); name && *name) o.host = name;
  o.flash_name = a.name;
  o.persist_dir = a.persist_dir;
  o.shm_dir = a.shm_dir;
  o.flash_ranks = a.flash_ranks;
  o.max_restarts = a.max_restarts;
  o.nvml = !a.no_nvml;
  o.kernel_log = a.kernel_log;
  o.passive = a.passive;
  o.warm_standby = a.warm_standby;
  o.actuators = {a.evict_cmd, a.reset_gpu_cmd, a.reboot_cmd, a.execute, 120};
  double hang_minimum = 0;
  if (!cli::parse_positive_seconds(a.hang_minimum, "--hang-timeout-min", hang_minimum) ||
      !cli::parse_positive_seconds(a.startup_timeout, "--startup-timeout", o.startup_timeout_s) ||
      !cli::parse_positive_seconds(a.stop_grace, "--stop-grace", o.stop_grace_s) ||
      !cli::parse_positive_seconds(a.health_interval, "--health-interval", o.health_interval_s))
    return cli::kExitBadInput;
  if (a.hang_minimum) o.hang_minimum_s = hang_minimum;
  for (const auto& [flag, dir] : {std::pair{"--persist-dir", a.persist_dir}, std::pair{"--shm-dir", a.shm_dir}})
    if (!dir.empty() && !std::filesystem::is_directory(dir)) {
      std::cerr << "ctwin: " << flag << " " << dir << ": not a folder\n";
      return cli::kExitBadInput;
    }
  if (!a.kernel_log.empty() && !std::filesystem::exists(a.kernel_log)) {
    std::cerr << "ctwin: --kernel-log " << a.kernel_log << ": no such file\n";
    return cli::kExitBadInput;
  }
  if (a.no_metrics) {
    o.metrics_port = -1;
  } else {
    if (!cli::parse_host_port(a.metrics, "--metrics", o.metrics_host, o.metrics_port)) return cli::kExitBadInput;
  }
  if (!a.precheck_cmd.empty()) o.precheck = a.precheck_cmd;
  else if (scenario.precheck.enabled && !a.no_precheck)
    o.precheck = shell_quote(std::filesystem::canonical("/proc/self/exe").string()) + prefix_ + " precheck --backend " + a.precheck_backend + " --policy " + shell_quote(a.policy);
  return 0;
}

int LiveCommands::supervise_printing(const Scenario& scenario, const live::SupervisorOptions& o, const std::string& events) {
  const RecoveryController controller(scenario);
  // A node without a master is a job of one: the same job master decides, in this process.
  live::SupervisorOptions options = o;
  std::optional<live::LocalCoordination> local;
  if (!options.coordination) {
    local.emplace(scenario, controller,
                  live::MasterOptions::job_of_one(o.host.empty() ? this_host() : o.host, o.flash_ranks, o.max_restarts, !o.precheck.empty(), o.node, events));
    options.coordination = &*local;
  }
  // SIGINT or SIGTERM: the trainer is asked to save and stop, and the log is closed.
  live::supervisor_stop_flag() = false;
  auto on_signal = [](int) { live::supervisor_stop_flag() = true; };
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  live::SupervisorResult r;
  try {
    r = live::supervise(scenario, options);
  } catch (const std::invalid_argument& e) {  // the trainer cannot be executed
    std::cerr << "ctwin: " << e.what() << "\n";
    return cli::kExitBadInput;
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  std::printf("%s\nsteps: %lld, restarts: %d", r.reason.c_str(), static_cast<long long>(r.last_step), r.restarts);
  if (local) {  // the job's ledger, its master's (an agent's job prints its own at the master)
    local->close();
    const Ledger& ledger = local->master().ledger();
    const double wall = static_cast<double>(ledger.total()) / 1e6, productive = static_cast<double>(ledger[Category::Productive]) / 1e6;
    std::printf(", wall %.3f s, productive %.3f s (%.1f%%)", wall, productive, wall > 0 ? 100 * productive / wall : 0.0);
  }
  std::printf("\n");
  if (!events.empty()) std::printf("event log: %s\n", events.c_str());
  return r.exit_code;
}

}  // namespace ctwin
