#include "live/cluster/node_check.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/wall_clock.hpp"

extern char** environ;

namespace ctwin::live::cluster {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

NodeCheck check_member(ComputeDevice& device, Bootstrap& group, const MemberCheckOptions& o) {
  const auto t0 = Clock::now();
  const auto left = [&] { return std::max(0.1, o.timeout_s - seconds_since(t0)); };
  NodeCheck r;
  try {
    r.gemm_flops = device.gemm_flops(o.gemm_n, o.burn_in_iterations);
    if (o.delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(o.delay_s));
    group.set_patience(left());
    std::vector<unsigned char> id;
    if (group.rank() == 0) id = device.make_comm_id();
    const auto ids = group.allgather(id);
    if (o.stuck)
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // the agent kills it past the timeout
    if (group.size() > 1)
      r.allreduce_s = device.allreduce_seconds(ids[0], group.size(), group.rank(), o.allreduce_bytes, o.allreduce_iterations, left());
    r.seconds = seconds_since(t0);
    r.passed = r.seconds < o.timeout_s;
    if (!r.passed) r.error = "took longer than the round's timeout";
  } catch (const std::exception& e) {
    r.error = e.what();
    r.seconds = seconds_since(t0);
  }
  return r;
}

std::string member_result_line(const NodeCheck& r) {
  return nlohmann::json{{"passed", r.passed}, {"seconds", r.seconds}, {"gemm_flops", r.gemm_flops}, {"allreduce_s", r.allreduce_s}, {"error", r.error}}
      .dump();
}

NodeCheckRunner::NodeCheckRunner(NodeCheckOptions options, std::function<void(const NodeCheck&)> done)
    : o_(std::move(options)), done_(std::move(done)), thread_([this] { work(); }) {}

NodeCheckRunner::~NodeCheckRunner() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void NodeCheckRunner::start(const PrecheckTask& task) {
  std::lock_guard lock(mutex_);
  pending_ = task;  // a newer task replaces one that has not begun
  wake_.notify_all();
}

void NodeCheckRunner::work() {
  for (;;) {
    PrecheckTask task;
    int round = 0;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || pending_; });
      if (stopping_) return;
      task = *pending_;
      pending_.reset();
      round = rounds_run_++;
    }
    NodeCheck result = run(task, round);
    result.key = task.key;
    done_(result);
  }
}

//! Starts one process per GPU, reads each one's result line, and kills what is still running when
//! the round's time is up.
NodeCheck NodeCheckRunner::run(const PrecheckTask& task, int round) {
  // The processes bound themselves by the timeout; one that did not (hung in a driver call) is killed a second later.
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(task.timeout_s + 1));
  // The environment, prepared before fork: the child only execs.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CTWIN_JOB_TOKEN=", 16) != 0) env_text.emplace_back(*e);
  env_text.push_back("CTWIN_JOB_TOKEN=" + o_.token);
  std::vector<char*> envp;
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  // A noisy node is a delay in the first two rounds, and healthy after them.
  std::optional<Injection> inject = o_.inject;
  if (inject && inject->kind == Injection::Kind::Noisy)
    inject = round < 2 ? std::optional(Injection{Injection::Kind::Delay, inject->value}) : std::nullopt;

  struct Child {
    pid_t pid = -1;
    int out = -1;
    std::string text;
  };
  std::vector<Child> children;
  NodeCheck node;
  node.passed = true;
  for (int gpu = 0; gpu < task.gpus; ++gpu) {
    std::vector<std::string> args = o_.command;
    auto add = [&](const char* flag, const std::string& value) { args.insert(args.end(), {flag, value}); };
    add("--master", o_.master_host + ":" + std::to_string(o_.master_port));
    add("--key", task.key);
    add("--ranks", std::to_string(task.ranks));
    add("--rank", std::to_string(task.first_rank + gpu));
    add("--device", std::to_string(gpu));
    add("--backend", o_.backend);
    char timeout[32];
    std::snprintf(timeout, sizeof timeout, "%.3fs", task.timeout_s);
    add("--timeout", timeout);
    if (o_.gemm_n) add("--gemm-n", std::to_string(*o_.gemm_n));
    if (o_.burn_in_iterations) add("--burn-in-iterations", std::to_string(*o_.burn_in_iterations));
    if (o_.allreduce_bytes) add("--allreduce-bytes", std::to_string(*o_.allreduce_bytes) + "B");
    if (inject) add("--inject", inject->text());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
      node.passed = false;
      node.error = std::string("pipe: ") + std::strerror(errno);
      break;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(pipe_fds[1], STDOUT_FILENO);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(pipe_fds[1]);
    if (pid < 0) {
      ::close(pipe_fds[0]);
      node.passed = false;
      node.error = std::string("fork: ") + std::strerror(errno);
      break;
    }
    children.push_back({pid, pipe_fds[0], {}});
  }
  // Read until every child closed its output or the time is up.
  for (;;) {
    std::vector<pollfd> open;
    for (const auto& c : children)
      if (c.out >= 0) open.push_back({c.out, POLLIN, 0});
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (open.empty() || left_ms <= 0) break;
    if (::poll(open.data(), open.size(), static_cast<int>(std::min<long long>(left_ms, 500))) <= 0) continue;
    for (auto& c : children) {
      if (c.out < 0) continue;
      char buffer[4096];
      pollfd one{c.out, POLLIN, 0};
      if (::poll(&one, 1, 0) <= 0) continue;
      const ssize_t n = ::read(c.out, buffer, sizeof buffer);
      if (n > 0 && c.text.size() < 65536) c.text.append(buffer, static_cast<std::size_t>(n));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) ::close(c.out), c.out = -1;
    }
  }
  for (auto& c : children) {
    if (c.out >= 0) {  // still running past the round: hung
      ::kill(c.pid, SIGKILL);
      ::close(c.out);
      c.out = -1;
      c.text.clear();
    }
    ::waitpid(c.pid, nullptr, 0);
    while (!c.text.empty() && c.text.back() == '\n') c.text.pop_back();
    const auto j = nlohmann::json::parse(c.text.substr(c.text.find_last_of('\n') + 1), nullptr, false);
    if (!j.is_object()) {
      node.passed = false;
      if (node.error.empty()) node.error = "a GPU's check did not finish within the round's " + std::to_string(static_cast<long>(task.timeout_s)) + " s";
      continue;
    }
    const bool passed = j.value("passed", false);
    node.passed &= passed;
    node.seconds = std::max(node.seconds, j.value("seconds", 0.0));
    node.allreduce_s = std::max(node.allreduce_s, j.value("allreduce_s", 0.0));
    const double flops = j.value("gemm_flops", 0.0);
    node.gemm_flops = node.gemm_flops == 0 ? flops : std::min(node.gemm_flops, flops);
    if (!passed && node.error.empty()) node.error = j.value("error", std::string("failed"));
  }
  if (!node.passed) node.seconds = task.timeout_s;
  return node;
}

}  // namespace ctwin::live::cluster
