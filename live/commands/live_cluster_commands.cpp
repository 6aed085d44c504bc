// `ctwin live master` and `ctwin live agent` (live/cluster): a job master and one agent per node.
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>

#include "core/atomic_file.hpp"
#include "core/command_line.hpp"
#include <filesystem>

#include "core/units.hpp"
#include "live/backend/cpu_device.hpp"
#include "live/backend/cuda_device.hpp"
#include "live/cluster/agent_link.hpp"
#include "live/cluster/master_exchange.hpp"
#include "live/cluster/master_service.hpp"
#include "live/cluster/node_check.hpp"
#include "live/commands/live_commands.hpp"
#include "live/precheck/injection.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"

namespace ctwin {

namespace {

std::atomic<bool> g_stop{false};

//! The job's token: from --token-file, else $CTWIN_JOB_TOKEN. Without one nothing starts.
std::optional<std::string> job_token(const std::string& file) {
  std::string token;
  if (!file.empty()) {
    // A secret others may read is no secret: refused, as ssh refuses a key file others can read.
    if (struct stat st{}; ::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      std::cerr << "ctwin: --token-file " << file << ": mode " << mode << " lets the group or others read or write it; chmod 600 it\n";
      return std::nullopt;
    }
    std::ifstream in(file);
    if (!in || !std::getline(in, token)) {
      std::cerr << "ctwin: --token-file " << file << ": cannot read a token from it\n";
      return std::nullopt;
    }
  } else if (const char* env = std::getenv("CTWIN_JOB_TOKEN")) {
    token = env;
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.size() < 16) {
    std::cerr << "ctwin: the job token (--token-file, or $CTWIN_JOB_TOKEN) must have at least 16 characters; got " << token.size() << "\n";
    return std::nullopt;
  }
  return token;
}

//! The rank a node asks for: SLURM_NODEID, else a Kubernetes StatefulSet pod's ordinal (name-N).
long node_identity() {
  const auto number = [](const char* text) -> long {
    char* end = nullptr;
    const long n = text && *text ? std::strtol(text, &end, 10) : -1;
    return end && *end == '\0' && n >= 0 && n <= 1'000'000 ? n : -1;
  };
  if (const long n = number(std::getenv("SLURM_NODEID")); n >= 0) return n;
  if (std::getenv("KUBERNETES_SERVICE_HOST")) {
    const std::string host = this_host();
    if (const auto dash = host.rfind('-'); dash != std::string::npos) return number(host.c_str() + dash + 1);
  }
  return -1;
}

std::string random_id() {
  std::random_device device;
  char text[17];
  std::snprintf(text, sizeof text, "%08x%08x", device(), device());
  return text;
}

}  // namespace


void LiveCommands::add_cluster_commands(CLI::App& parent) {
  auto& m = master_args_;
  master_ = parent.add_subcommand("master", "the job master: agents join, it assigns node ranks and coordinates every restart");
  master_->add_option("--policy", m.policy, "scenario, or a policy file: the controller that decides")->required();
  master_->add_option("--nnodes", m.nnodes, "nodes the job runs on")->required()->check(CLI::Range(1, 100000));
  master_->add_option("--nproc-per-node", m.nproc_per_node, "trainer ranks per node")->check(CLI::Range(1, 4096));
  master_->add_option("--bind", m.bind, "address to serve agents on, HOST:PORT (explicit; port 0: any free port)")->required();
  master_->add_option("--token-file", m.token_file, "file whose first line is the job's token (default: $CTWIN_JOB_TOKEN)");
  master_->add_option("--job", m.job, "the job's name");
  master_->add_option("--events", m.events, "the job's event log (CSV, docs/event-log.md)");
  master_->add_option("--journal", m.journal, "the master's journal: started again with it, the master resumes the job");
  master_->add_option("--port-file", m.port_file, "write the port served to this file (with --bind HOST:0)");
  master_->add_option("--trainer-port", m.trainer_port, "the trainers' rendezvous port on node rank 0 (MASTER_PORT)")->check(CLI::Range(1, 65535));
  master_->add_option("--report-interval", m.report_interval, "agents report this often (default 1s)");
  master_->add_option("--agent-timeout", m.agent_timeout, "an agent silent this long, while the master itself ran, lost its node (default 4s, at least 4 report intervals)");
  master_->add_option("--straggler-window", m.straggler_window,
                      "ranks' compute times compared this often, when policies.stragglers.evict (default 30s)");
  master_->add_option("--forecast", m.forecast,
                      "scenario whose fault rates and their uncertainty the master forecasts the rest of the run from, learning the rates from "
                      "the job's own interruptions (status, metrics and a log row at each interruption)");
  master_->add_option("--total-steps", m.total_steps, "the run's length in steps: what evicting a straggler saves (default: as long again as so far)")
      ->check(CLI::Range(0LL, 1LL << 50));
  master_->add_option("--precheck-timeout", m.precheck_timeout,
                      "a precheck round across nodes (policies.precheck.enabled) gives up on a node after this long (default 60s)");
  master_->add_option("--nvlink-domain-nodes", m.nvlink_domain_nodes,
                      "multi-node NVLink domains of this many consecutive node ranks (GB200 NVL72: 18): the precheck pairs whole domains")
      ->check(CLI::Range(0, 100000));
  master_->add_option("--max-restarts", m.max_restarts, "give up (exit 1) after this many restarts")->check(CLI::Range(0, 100000));
  master_->add_option("--metrics", m.metrics, "Prometheus endpoint HOST:PORT (default 127.0.0.1:9401; port 0: any free port)");
  master_->add_flag("--no-metrics", m.no_metrics, "no Prometheus endpoint");
  master_->add_flag("--resume", m.resume,
                    "a new run of the job takes the steps another run left in the nodes' persist folders (without it, a node that "
                    "finds them ends the job, exit 2)");

  agent_ = parent.add_subcommand("agent", "a node's agent: joins the master, runs the trainer as the master's plan says, reports its faults");
  add_supervisor_options(agent_, agent_args_);
  auto& a = agent_link_args_;
  agent_->add_option("--master", a.master, "the master's HOST:PORT")->required();
  agent_->add_option("--token-file", a.token_file, "file whose first line is the job's token (default: $CTWIN_JOB_TOKEN)");
  agent_->add_option("--node-id", a.node_id, "the node rank to ask for (default: $SLURM_NODEID, a StatefulSet pod's ordinal, else any)");
  agent_->add_option("--address", a.address, "where this node's trainers are reached (default: --host)");
  agent_->add_flag("--spare", a.spare, "join as a hot spare");
  agent_->add_option("--section-interval", a.section_interval, "send the ranks' compute times (section lines) this often (default 10s)");
  agent_->add_option("--precheck-gemm-n", a.precheck_gemm_n, "the precheck's burn-in GEMM size (default cuda 8192, cpu 384)")->check(CLI::Range(16, 65536));
  agent_->add_option("--precheck-allreduce-bytes", a.precheck_allreduce_bytes, "the precheck's all-reduce size (default cuda 64MiB, cpu 4MiB)");
  agent_->add_option("--precheck-inject", a.precheck_inject, "cpu backend, for tests: slow=F (F times slower), delay=S (S seconds longer), noisy=S (S seconds longer in the first two rounds only) or stuck (a hung GPU process)");

  // One GPU's part of a precheck round, started by the agent (one process per GPU); not for people.
  auto& p = pair_check_args_;
  pair_check_ = parent.add_subcommand("pair-check", "one GPU's part of a precheck round across nodes (the agent starts it)");
  pair_check_->group("");
  pair_check_->add_option("--master", p.master, "the master's HOST:PORT")->required();
  pair_check_->add_option("--key", p.key, "the round and group")->required();
  pair_check_->add_option("--ranks", p.ranks, "GPUs in the group")->required()->check(CLI::Range(1, 1 << 20));
  pair_check_->add_option("--rank", p.rank, "this GPU's rank in the group")->required()->check(CLI::Range(0, (1 << 20) - 1));
  pair_check_->add_option("--device", p.device, "local GPU index")->check(CLI::Range(0, 4095));
  pair_check_->add_option("--backend", p.backend, "cuda or cpu")->check(CLI::IsMember({"cuda", "cpu"}));
  pair_check_->add_option("--timeout", p.timeout, "the whole round");
  pair_check_->add_option("--gemm-n", p.gemm_n, "burn-in GEMM size")->check(CLI::Range(16, 65536));
  pair_check_->add_option("--burn-in-iterations", p.burn_in_iterations, "burn-in GEMMs")->check(CLI::Range(1, 100000));
  pair_check_->add_option("--allreduce-bytes", p.allreduce_bytes, "all-reduce size");
  pair_check_->add_option("--inject", p.inject, "cpu: slow=F, delay=S or stuck");
}

int LiveCommands::run_pair_check() {
  const auto& a = pair_check_args_;
  const auto token = job_token("");
  std::string host;
  int port = 0;
  live::cluster::MemberCheckOptions o;
  const bool cpu = a.backend == "cpu";
  if (cpu) {
    o.gemm_n = 384;
    o.burn_in_iterations = 40;
    o.allreduce_bytes = std::size_t(4) << 20;
    o.allreduce_iterations = 3;
  }
  o.gemm_n = a.gemm_n.value_or(o.gemm_n);
  o.burn_in_iterations = a.burn_in_iterations.value_or(o.burn_in_iterations);
  if (!token || !cli::parse_host_port(a.master, "--master", host, port) || !cli::parse_positive_seconds(a.timeout, "--timeout", o.timeout_s) ||
      !cli::parse_size(a.allreduce_bytes, "--allreduce-bytes", o.allreduce_bytes))
    return cli::kExitBadInput;
  live::CpuFaults faults;
  using Kind = live::Injection::Kind;
  if (!a.inject.empty()) {
    const auto injection = live::parse_injection(a.inject, {Kind::Slow, Kind::Delay, Kind::Stuck});
    if (!injection) {
      std::cerr << "ctwin: --inject " << a.inject << ": expected " << live::injection_choices({Kind::Slow, Kind::Delay, Kind::Stuck}) << "\n";
      return cli::kExitBadInput;
    }
    if (injection->kind == Kind::Stuck) o.stuck = true;
    if (injection->kind == Kind::Slow) faults.slowdown = injection->value;
    if (injection->kind == Kind::Delay) o.delay_s = injection->value;
  }
  live::NodeCheck result;
  try {
    std::unique_ptr<live::ComputeDevice> device;
    if (cpu) device = std::make_unique<live::CpuDevice>(a.device, faults);
    else device = std::make_unique<live::CudaDevice>(a.device);
    live::cluster::MasterExchange group(host, port, *token, a.key, a.rank, a.ranks);
    result = live::cluster::check_member(*device, group, o);
  } catch (const std::exception& e) {  // CannotRunHere too: this GPU fails its round, with the reason
    result.error = e.what();
  }
  std::cout << live::cluster::member_result_line(result) << std::endl;
  return result.passed ? 0 : cli::kExitFailure;
}

int LiveCommands::run_master() {
  const auto& m = master_args_;
  const Scenario scenario = load_policies_or_scenario(m.policy);
  if (scenario.elastic.shrink && m.nnodes % std::max(scenario.elastic.replica_nodes, 1) != 0) {
    std::cerr << "ctwin: " << m.policy << ": /policies/elastic/replica_nodes: " << scenario.elastic.replica_nodes
              << " does not divide --nnodes " << m.nnodes << " (the job is whole replicas)\n";
    return cli::kExitBadInput;
  }
  const RecoveryController controller(scenario);
  const auto token = job_token(m.token_file);
  std::string host;
  int port = 0;
  live::MasterOptions o;
  if (!token || !cli::parse_host_port(m.bind, "--bind", host, port) ||
      !cli::parse_positive_seconds(m.report_interval, "--report-interval", o.report_interval_s) ||
      !cli::parse_positive_seconds(m.agent_timeout, "--agent-timeout", o.agent_timeout_s) ||
      !cli::parse_positive_seconds(m.straggler_window, "--straggler-window", o.straggler_window_s))
    return cli::kExitBadInput;
  if (!cli::parse_positive_seconds(m.precheck_timeout, "--precheck-timeout", o.precheck_timeout_s)) return cli::kExitBadInput;
  if (!m.agent_timeout) o.agent_timeout_s = std::max(o.agent_timeout_s, 4 * o.report_interval_s);  // four heartbeats missed
  std::string metrics_host;  // checked before anything serves: a bad --metrics is exit 2 with nothing started
  int metrics_port = 0;
  if (!m.no_metrics && !cli::parse_host_port(m.metrics, "--metrics", metrics_host, metrics_port)) return cli::kExitBadInput;
  o.nvlink_domain_nodes = m.nvlink_domain_nodes;
  if (o.nvlink_domain_nodes > 0 && m.nnodes % o.nvlink_domain_nodes != 0) {
    std::cerr << "ctwin: --nvlink-domain-nodes " << o.nvlink_domain_nodes << " does not divide --nnodes " << m.nnodes << "\n";
    return cli::kExitBadInput;
  }
  o.total_steps = m.total_steps;
  if (!m.forecast.empty()) o.forecast = std::make_shared<const Scenario>(load_scenario(m.forecast));  // BadInput: exit 2 naming the field
  o.job = m.job;
  o.host = this_host();
  o.nnodes = m.nnodes;
  o.nproc_per_node = m.nproc_per_node;
  o.trainer_port = m.trainer_port;
  o.max_restarts = m.max_restarts;
  o.events_path = m.events;
  o.journal_path = m.journal;
  o.adopt_steps = m.resume;
  live::JobMaster master(scenario, controller, o, live::JobMaster::Clock::now());  // BadInput: a journal of another job
  std::unique_ptr<live::cluster::MasterService> service;
  try {
    service = std::make_unique<live::cluster::MasterService>(master, *token, host, port);
  } catch (const std::runtime_error& e) {
    std::cerr << "ctwin: --bind " << m.bind << ": " << e.what() << "\n";
    return cli::kExitBadInput;
  }
  std::cerr << "ctwin master: job " << m.job << " on " << cli::host_port_text(host, service->port()) << ", " << m.nnodes << " nodes\n";
  if (!m.port_file.empty()) write_file_atomically(m.port_file, std::to_string(service->port()) + "\n");
  std::unique_ptr<live::LiveMetrics> metrics;
  if (!m.no_metrics) {
    try {
      metrics = std::make_unique<live::LiveMetrics>(metrics_host, metrics_port, live::MetricsLabels{m.job, "master", o.host});
      std::cerr << "ctwin master: metrics on http://" << cli::host_port_text(metrics_host, metrics->port()) << "/metrics\n";
    } catch (const std::exception& e) {
      std::cerr << "ctwin master: warning: no metrics: " << e.what() << "\n";  // the job matters more than its metrics
    }
  }
  g_stop = false;
  std::signal(SIGINT, [](int) { g_stop = true; });
  std::signal(SIGTERM, [](int) { g_stop = true; });
  service->run(g_stop, metrics.get());
  service.reset();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (!master.done()) {
    if (m.journal.empty())
      std::printf("stopped; without --journal no master can resume this job: started again, a master starts it over\n");
    else
      std::printf("stopped; the job goes on with a master started again with --journal %s\n", m.journal.c_str());
    return 0;
  }
  const Ledger& l = master.ledger();
  const double wall = static_cast<double>(l.total()) / 1e6, productive = static_cast<double>(l[Category::Productive]) / 1e6;
  std::printf("%s\nsteps: %lld, restarts: %d, wall %.3f s, productive %.3f s (%.1f%%)\n", master.reason().c_str(),
              static_cast<long long>(master.step()), master.restarts(), wall, productive, wall > 0 ? 100 * productive / wall : 0.0);
  if (!m.events.empty()) std::printf("event log: %s\n", m.events.c_str());
  return master.exit_code();
}

int LiveCommands::run_agent() {
  const Scenario scenario = load_policies_or_scenario(agent_args_.policy);
  live::SupervisorOptions o;
  if (const int bad = supervisor_options(*agent_, agent_args_, o)) return bad;
  const auto& a = agent_link_args_;
  const auto token = job_token(a.token_file);
  std::string host;
  int port = 0;
  if (!token || !cli::parse_host_port(a.master, "--master", host, port) ||
      !cli::parse_positive_seconds(a.section_interval, "--section-interval", o.section_report_s))
    return cli::kExitBadInput;
  live::JoinRequest join;
  join.agent = random_id();
  join.node_id = a.node_id ? *a.node_id : node_identity();
  if (join.node_id >= 0 && !agent_->count("--node-index")) o.node = static_cast<int>(join.node_id);
  join.host = o.host.empty() ? this_host() : o.host;
  join.address = a.address.empty() ? join.host : a.address;
  join.spare = a.spare;
  const std::string memory = o.shm_dir + "/ctwin-" + o.flash_name + ".run";  // node-local: gone with a reboot, as the node's snapshots are
  if (!a.spare) join.run = live::cluster::remembered_run(memory, o.persist_dir);
  live::cluster::AgentLink link(host, port, *token, join);
  link.remember_run_in(memory);
  o.coordination = &link;
  o.precheck.clear();  // the agent's precheck is the one across nodes (below), not a command of its own
  // The precheck across nodes: this node's GPUs, one `pair-check` process each, when the master asks.
  live::cluster::NodeCheckOptions check;
  check.command = {std::filesystem::canonical("/proc/self/exe").string()};
  if (!prefix_.empty()) check.command.push_back(prefix_.substr(1));
  check.command.push_back("pair-check");
  check.master_host = host;
  check.master_port = port;
  check.token = *token;
  check.backend = agent_args_.precheck_backend;
  check.gemm_n = a.precheck_gemm_n;
  if (std::size_t bytes = 0; a.precheck_allreduce_bytes) {
    if (!cli::parse_size(a.precheck_allreduce_bytes, "--precheck-allreduce-bytes", bytes)) return cli::kExitBadInput;
    check.allreduce_bytes = bytes;
  }
  if (!a.precheck_inject.empty()) {
    using Kind = live::Injection::Kind;
    const std::initializer_list<Kind> kinds{Kind::Slow, Kind::Delay, Kind::Noisy, Kind::Stuck};
    check.inject = live::parse_injection(a.precheck_inject, kinds);
    if (!check.inject || check.backend != "cpu") {
      std::cerr << "ctwin: --precheck-inject " << a.precheck_inject << ": expected " << live::injection_choices(kinds)
                << ", with --precheck-backend cpu\n";
      return cli::kExitBadInput;
    }
  }
  int code = 0;
  {
    live::cluster::NodeCheckRunner checks(check, [&link](const live::NodeCheck& result) { link.precheck_done(result); });
    link.on_precheck([&checks](const live::PrecheckTask& task) { checks.start(task); });
    code = supervise_printing(scenario, o, agent_args_.events);
    link.on_precheck(nullptr);
  }
  link.flush(5);
  if (const std::string why = link.refused(); !why.empty()) {
    std::cerr << "ctwin agent: " << why << "\n";
    return cli::kExitBadInput;
  }
  return code;
}

}  // namespace ctwin
