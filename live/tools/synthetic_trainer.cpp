// ctwin-synthetic-trainer: a stand-in for a training job, to demonstrate and test the supervisor
// (`ctwin live run`). Each step runs GEMMs (on a GPU through the CUDA plugin, or on the CPU) and
// rewrites one of 64 stripes of its state with a value that depends on the step, so that the state
// after any step is known in closed form: a restored state is checked byte for byte (on a GPU, the
// stripes' ends). The state is checkpointed with the flash checkpoint engine and restored at start.
// Faults are injected on one attempt only (the supervisor numbers attempts in $CTWIN_ATTEMPT), so
// that the restarted trainer runs through.
//
// It talks to the supervisor with datagrams to the Unix socket at $CTWIN_HEARTBEAT_SOCKET
// (live/job/heartbeat.hpp): restored, step, checkpoint, nan, stopped, done.
// SIGUSR1 asks for a checkpoint after the current step; SIGTERM for a checkpoint, then exit 0.
// With --lockstep 1, every step ends in a barrier among the job's ranks, as a synchronous job's
// all-reduce does: one rank hung stalls them all, one dead fails them all.
// Standard library and the portable live core only: it builds on a bare GPU machine.

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/units.hpp"
#include "live/backend/plugin_loader.hpp"
#include "live/checkpoint/flash_engine.hpp"
#include "live/checkpoint/flash_error.hpp"
#include "policies/checkpoint_policy.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kStripes = 64;

std::atomic<bool> checkpoint_requested{false}, stop_requested{false};

struct Options {
  long long steps = 100, crash_at = -1, hang_at = -1, slow_from = -1, nan_at = -1, spike_at = -1;
  long long checkpoint_every = 10;
  double late_restore_ms = 0;     //!< in the attempts after the fault attempt, this rank waits before it restores
  std::uint64_t state_bytes = 64ull << 20;
  int device = -1;  // -1: CPU
  int gemm_n = 128, gemms_per_step = 1, fault_attempt = 0;
  int fault_rank = -1;  // -1: faults on every rank; else only on the job's rank ($RANK) this is
  double step_ms = 0, slowdown = 1;
  double save_ms = 0;  //!< a save stalls at least this long (the device-to-host copy of a larger state)
  bool lockstep = false;
  int group = 0;  //!< its pipeline stage and role, in its section lines
  std::string name, persist_dir, shm_dir = "/dev/shm";
};

int heartbeat_fd = -1;
sockaddr_un heartbeat_to{};
int local_rank = 0;

void beat(const char* format, ...) {
  if (heartbeat_fd < 0) return;
  char line[256];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(line, sizeof line - 16, format, args);
  va_end(args);
  n = std::min<int>(n, static_cast<int>(sizeof line) - 17);  // a message cut short ends before its NUL
  n += std::snprintf(line + n, 16, " rank=%d", local_rank);
  // One datagram, one message. It waits while the supervisor's queue is full (at most the send
  // timeout: a stuck supervisor must not stop training); a supervisor gone away fails at once.
  [[maybe_unused]] const ssize_t sent = ::sendto(heartbeat_fd, line, static_cast<std::size_t>(n), 0,
                                                 reinterpret_cast<const sockaddr*>(&heartbeat_to), sizeof heartbeat_to);
}

unsigned char stripe_value(long long step) { return static_cast<unsigned char>((step * 131 + 7) & 0xff); }

//! The value stripe `j` holds after `step`: written by the last step t <= step with t % 64 == j.
unsigned char expected_stripe(int j, long long step) {
  if (step < 1) return 0;
  long long t = step - ((step - j) % kStripes + kStripes) % kStripes;
  return t >= 1 ? stripe_value(t) : 0;
}

//! The options with CLI11 (what ctwin-live uses); bad ones exit 2 with CLI11's message.
Options parse(int argc, char** argv) {
  Options o;
  if (const char* v = std::getenv("CTWIN_FLASH_NAME")) o.name = v;
  if (const char* v = std::getenv("CTWIN_FLASH_PERSIST_DIR")) o.persist_dir = v;
  if (const char* v = std::getenv("CTWIN_SHM_DIR")) o.shm_dir = v;
  CLI::App app(
      "ctwin-synthetic-trainer: a training process that checkpoints through the flash engine and can fail on purpose, for\n"
      "testing the live supervisor. Each step writes one of 64 stripes of its state (a restore is checked stripe by stripe)\n"
      "and reports to the supervisor's heartbeat socket when $CTWIN_HEARTBEAT_SOCKET is set.");
  app.footer("\nexample: ctwin-synthetic-trainer --steps 200 --checkpoint-every 20 --crash-at-step 50 --persist-dir /tmp/ckpt");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // a flag given twice: the last, as launchers append
  std::string state_bytes = "64MiB", device = "cpu";
  int lockstep = 0;
  const auto positive = CLI::Range(1LL, 1'000'000'000'000LL), at_least_0 = CLI::Range(0.0, 1e12);
  app.add_option("--steps", o.steps, "steps to run")->capture_default_str()->check(positive);
  app.add_option("--state-bytes", state_bytes, "the state checkpointed (4096, 64MiB, 1GiB)")->capture_default_str();
  app.add_option("--device", device, "where the state lives and the GEMMs run: cpu or cuda:I")->capture_default_str();
  app.add_option("--gemm-n", o.gemm_n, "the n of each step's n x n GEMM")->capture_default_str()->check(positive);
  app.add_option("--gemms-per-step", o.gemms_per_step, "GEMMs a step")->capture_default_str()->check(at_least_0);
  app.add_option("--step-ms", o.step_ms, "a step lasts at least this long")->capture_default_str()->check(at_least_0);
  app.add_option("--checkpoint-every", o.checkpoint_every, "steps between checkpoints")->capture_default_str()->check(positive);
  app.add_option("--save-ms", o.save_ms, "a save stalls at least this long")->capture_default_str()->check(at_least_0);
  app.add_option("--name", o.name, "the checkpoint's name (default $CTWIN_FLASH_NAME, else synthetic)");
  app.add_option("--persist-dir", o.persist_dir, "persist checkpoints here (default $CTWIN_FLASH_PERSIST_DIR; none: memory only)");
  app.add_option("--shm-dir", o.shm_dir, "shared memory for snapshots (default $CTWIN_SHM_DIR, else /dev/shm)");
  app.add_option("--crash-at-step", o.crash_at, "exit 1 at this step");
  app.add_option("--hang-at-step", o.hang_at, "stop beating at this step");
  app.add_option("--nan-at-step", o.nan_at, "report a NaN loss at this step");
  app.add_option("--slow-from-step", o.slow_from, "from this step each step takes --slowdown times as long");
  app.add_option("--slowdown", o.slowdown, "the slowdown's factor")->capture_default_str()->check(CLI::Range(1.0, 1e6));
  app.add_option("--spike-at-step", o.spike_at, "a loss spike at this step");
  app.add_option("--late-restore-ms", o.late_restore_ms, "in every attempt after --fault-attempt, wait this long before restoring (a slow node's restart)")
      ->capture_default_str()->check(at_least_0);
  app.add_option("--fault-attempt", o.fault_attempt, "faults only in this attempt ($CTWIN_ATTEMPT; the first run is 0)")->capture_default_str();
  app.add_option("--fault-rank", o.fault_rank, "faults only on this rank (default: every rank)");
  app.add_option("--group", o.group, "its pipeline stage in its section lines")->capture_default_str();
  app.add_option("--lockstep", lockstep, "1: ranks wait for each other every step")->capture_default_str()->check(CLI::Range(0, 1));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  std::string why;
  const auto bytes = ctwin::parse_bytes(state_bytes, why);
  if (!bytes || *bytes < kStripes) {
    std::fprintf(stderr, "ctwin-synthetic-trainer: --state-bytes %s: %s\n", state_bytes.c_str(), bytes ? "at least 64 bytes" : why.c_str());
    std::exit(2);
  }
  o.state_bytes = static_cast<std::uint64_t>(*bytes);
  if (device == "cpu") o.device = -1;
  else if (device == "cuda") o.device = 0;
  else if (device.rfind("cuda:", 0) == 0 && device.size() > 5 && device.find_first_not_of("0123456789", 5) == std::string::npos)
    o.device = std::atoi(device.c_str() + 5);
  else {
    std::fprintf(stderr, "ctwin-synthetic-trainer: --device %s: cpu or cuda:I\n", device.c_str());
    std::exit(2);
  }
  o.lockstep = lockstep != 0;
  if (o.name.empty()) o.name = "synthetic";
  return o;
}

//! The state: host memory, or a GPU buffer driven through the plugin.
class State {
 public:
  State(std::uint64_t bytes, int device) : bytes_(bytes), device_(device) {
    if (device < 0) {
      host_.assign(bytes, 0);
      return;
    }
    plugin_ = &ctwin::live::cuda_plugin();
    ctwin::live::require_cuda_devices(*plugin_);
    ctwin::live::check_status(*plugin_, plugin_->device_alloc(device, bytes, &gpu_), "allocating the state");
    ctwin::live::check_status(*plugin_, plugin_->device_fill(gpu_, bytes, 0), "clearing the state");
  }
  ~State() {
    if (gpu_) plugin_->device_free(gpu_);
  }
  void* data() { return device_ < 0 ? static_cast<void*>(host_.data()) : gpu_; }
  std::uint64_t stripe_bytes() const { return bytes_ / kStripes; }

  void write_stripe(int j, unsigned char value) {
    const std::uint64_t at = static_cast<std::uint64_t>(j) * stripe_bytes();
    if (device_ < 0) std::memset(host_.data() + at, value, stripe_bytes());
    else ctwin::live::check_status(*plugin_, plugin_->device_fill(static_cast<char*>(gpu_) + at, stripe_bytes(), value), "fill");
  }

  //! The first wrong stripe after `step`, or -1. On a GPU, each stripe's first and last 4 KiB.
  int first_wrong_stripe(long long step) {
    for (int j = 0; j < kStripes; ++j) {
      const unsigned char want = expected_stripe(j, step);
      const std::uint64_t at = static_cast<std::uint64_t>(j) * stripe_bytes();
      if (device_ < 0) {
        const unsigned char* p = host_.data() + at;
        if (!std::all_of(p, p + stripe_bytes(), [&](unsigned char c) { return c == want; })) return j;
        continue;
      }
      const std::uint64_t sample = std::min<std::uint64_t>(4096, stripe_bytes());
      std::vector<unsigned char> ends(2 * sample);
      const char* base = static_cast<const char*>(gpu_) + at;
      ctwin::live::check_status(*plugin_, plugin_->copy_to_host(ends.data(), base, sample), "read back");
      ctwin::live::check_status(*plugin_, plugin_->copy_to_host(ends.data() + sample, base + stripe_bytes() - sample, sample), "read back");
      if (!std::all_of(ends.begin(), ends.end(), [&](unsigned char c) { return c == want; })) return j;
    }
    return -1;
  }

  //! The step's arithmetic: `count` n x n GEMMs.
  void gemms(int n, int count) {
    if (count <= 0) return;
    if (device_ >= 0) {
      double flops = 0;
      ctwin::live::check_status(*plugin_, plugin_->gemm_flops(device_, n, count, &flops), "GEMM");
      return;
    }
    const auto size = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    a_.resize(size, 1.0f / static_cast<float>(n));
    b_.resize(size, 0.5f);
    c_.assign(size, 0.0f);
    for (int k = 0; k < count; ++k)
      for (int i = 0; i < n; ++i)
        for (int p = 0; p < n; ++p) {
          const float aip = a_[static_cast<std::size_t>(i) * n + p];
          for (int j = 0; j < n; ++j) c_[static_cast<std::size_t>(i) * n + j] += aip * b_[static_cast<std::size_t>(p) * n + j];
        }
  }

 private:
  std::uint64_t bytes_;
  int device_;
  std::vector<unsigned char> host_;
  std::vector<float> a_, b_, c_;
  const ctwin_backend_v1* plugin_ = nullptr;
  void* gpu_ = nullptr;
};

void sleep_until(Clock::time_point t) { std::this_thread::sleep_until(t); }

//! The job's ranks meet at the end of every step, through TCP at $MASTER_ADDR:$MASTER_PORT with
//! rank 0 as the hub: what a synchronous job's all-reduce does to its ranks' progress. Blocking,
//! with no timeout of its own, like a collective: the supervisor's hang timeout is the bound.
class Lockstep {
 public:
  Lockstep(int rank, int world) : rank_(rank), world_(world) {
    if (world_ <= 1) return;
    const char* addr = std::getenv("MASTER_ADDR");
    const char* port = std::getenv("MASTER_PORT");
    if (!addr || !port) throw std::runtime_error("--lockstep needs MASTER_ADDR and MASTER_PORT");
    addrinfo hints{}, *found = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (::getaddrinfo(addr, port, &hints, &found) != 0 || !found) throw std::runtime_error(std::string("cannot resolve ") + addr);
    if (rank_ == 0) {
      const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const int one = 1;
      ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (::bind(listener, found->ai_addr, found->ai_addrlen) != 0 || ::listen(listener, 64) != 0)
        throw std::runtime_error(std::string("--lockstep: cannot listen on ") + addr + ":" + port + ": " + std::strerror(errno));
      for (int i = 1; i < world_; ++i) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) throw std::runtime_error(std::string("--lockstep: accept: ") + std::strerror(errno));
        peers_.push_back(fd);
      }
      ::close(listener);
    } else {
      for (;;) {  // rank 0 may not listen yet
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
          peers_.push_back(fd);
          break;
        }
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    ::freeaddrinfo(found);
    for (const int fd : peers_) {
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
  }
  ~Lockstep() {
    for (const int fd : peers_) ::close(fd);
  }
  //! Every rank has finished `step`; throws when a rank left.
  void barrier(long long step) {
    if (world_ <= 1) return;
    if (rank_ == 0) {
      for (const int fd : peers_) exchange(fd, step, false);
      for (const int fd : peers_) exchange(fd, step, true);
    } else {
      exchange(peers_[0], step, true);
      exchange(peers_[0], step, false);
    }
  }

 private:
  static void exchange(int fd, long long& step, bool sending) {
    auto* p = reinterpret_cast<char*>(&step);
    for (std::size_t left = sizeof step; left > 0;) {
      const ssize_t n = sending ? ::send(fd, p, left, MSG_NOSIGNAL) : ::recv(fd, p, left, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("--lockstep: a rank of the job went away (its collective failed)");
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  int rank_, world_;
  std::vector<int> peers_;
};

//! The master's checkpoint cadence when its file changed (a rename: a new inode or time).
void read_cadence(ctwin::CheckpointCadence& cadence) {
  static const char* path = std::getenv("CTWIN_CONTROL_FILE");
  static struct stat seen {};
  struct stat now {};
  if (!path || ::stat(path, &now) != 0) return;
  if (now.st_ino == seen.st_ino && now.st_mtim.tv_sec == seen.st_mtim.tv_sec && now.st_mtim.tv_nsec == seen.st_mtim.tv_nsec) return;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto j = nlohmann::json::parse(text.str(), nullptr, false);
  try {
    ctwin::CheckpointCadence read;
    read.revision = j.at("revision").get<std::int64_t>();
    for (const auto& c : j.at("changes")) read.changes.push_back({c.at("from").get<std::int64_t>(), c.at("every").get<std::int64_t>()});
    cadence = read;
    seen = now;
  } catch (const nlohmann::json::exception&) {  // unreadable: the cadence known so far holds
  }
}

int run(const Options& o) {
  const char* attempt_env = std::getenv("CTWIN_ATTEMPT");
  const int attempt = attempt_env ? std::atoi(attempt_env) : 0;
  const char* job_rank = std::getenv("RANK");
  const bool faulty = attempt == o.fault_attempt && (o.fault_rank < 0 || (job_rank && std::atoi(job_rank) == o.fault_rank));

  State state(o.state_bytes, o.device);
  ctwin::flash::EngineOptions eo;
  eo.name = o.name;
  eo.persist_dir = o.persist_dir;
  eo.shm_dir = o.shm_dir;
  // Under a job master (or torchrun) each node's trainer is one rank of the job: its flash slots
  // and shards are named by its global rank.
  if (const char* rank = std::getenv("RANK")) eo.rank = std::atoi(rank);
  if (const char* world = std::getenv("WORLD_SIZE")) eo.world = std::max(1, std::atoi(world));
  ctwin::flash::Engine engine(eo);
  engine.register_buffer("state", state.data(), o.state_bytes, o.device);

  // The master's cross-node commit ($CTWIN_RESTORE_STEP): exactly that step (-1: from scratch);
  // alone, the newest this node's ranks hold.
  const bool restarted_here = attempt > o.fault_attempt && (o.fault_rank < 0 || (job_rank && std::atoi(job_rank) == o.fault_rank));
  if (restarted_here && o.late_restore_ms > 0)
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(o.late_restore_ms * 1000)));
  const char* agreed = std::getenv("CTWIN_RESTORE_STEP");
  ctwin::flash::Restored restored;
  if (!agreed) restored = engine.restore();
  else if (const long long step = std::atoll(agreed); step >= 0) {
    restored = engine.restore_step(step);
    if (restored.step != step) {
      std::fprintf(stderr, "ctwin-synthetic-trainer: cannot restore the job's step %lld: %s\n", step,
                   restored.skipped.empty() ? "not found" : restored.skipped.front().c_str());
      return 5;
    }
  } else {
    engine.restore_step(-1);  // from scratch: the snapshots of the timeline abandoned go
  }
  long long step = std::max<long long>(restored.step, 0);
  if (restored.step >= 0) {
    if (const int wrong = state.first_wrong_stripe(step); wrong >= 0) {
      std::fprintf(stderr, "ctwin-synthetic-trainer: the state restored at step %lld is wrong (stripe %d)\n", step, wrong);
      return 5;
    }
  }
  const char* source = restored.source == ctwin::flash::RestoreSource::Memory ? "memory"
                       : restored.source == ctwin::flash::RestoreSource::Disk ? "disk" : "none";
  beat("restored %lld %s %.6f", restored.step, source, restored.seconds);
  std::fprintf(stderr, "ctwin-synthetic-trainer: attempt %d starts at step %lld (%s)\n", attempt, step, source);

  long long saved = restored.step;
  auto save = [&](long long s) {
    const auto began = Clock::now();
    auto stats = engine.save(s);
    if (o.save_ms > 0) {
      sleep_until(began + std::chrono::microseconds(static_cast<long long>(o.save_ms * 1000)));
      stats.seconds = std::chrono::duration<double>(Clock::now() - began).count();
    }
    saved = s;
    beat("checkpoint %lld %.6f", s, stats.seconds);
  };
  std::unique_ptr<Lockstep> lockstep;
  if (o.lockstep) {
    const char* world = std::getenv("WORLD_SIZE");
    lockstep = std::make_unique<Lockstep>(job_rank ? std::atoi(job_rank) : 0, world ? std::atoi(world) : 1);
  }
  ctwin::CheckpointCadence cadence;  // the master's ($CTWIN_CONTROL_FILE), read between steps
  // A persist that fails (a full disk) is a storage fault, said to the supervisor as it begins and
  // ends: training goes on from memory while the persister retries.
  bool said_failing = false;
  auto say_persist_health = [&](bool again) {  // again: a failure that goes on is said once more
    if (o.persist_dir.empty()) return;
    const auto health = engine.persist_health();
    if (health.failing == said_failing && !(health.failing && again)) return;
    said_failing = health.failing;
    if (health.failing) beat("persist %lld failed %s", static_cast<long long>(health.failed_step), health.error.c_str());
    else beat("persist %lld ok", static_cast<long long>(health.persisted_step));
  };
  while (step < o.steps) {
    const long long s = step + 1;
    const auto start = Clock::now();
    read_cadence(cadence);
    state.gemms(o.gemm_n, o.gemms_per_step);
    if (o.step_ms > 0) sleep_until(start + std::chrono::microseconds(static_cast<long long>(o.step_ms * 1000)));
    if (faulty && o.slow_from >= 0 && s >= o.slow_from && o.slowdown > 1)
      std::this_thread::sleep_for((Clock::now() - start) * (o.slowdown - 1));
    // Its compute: the whole step here (no collectives); the master compares it within its group.
    beat("section %lld %.6f %d", s, std::chrono::duration<double>(Clock::now() - start).count(), o.group);
    if (faulty && s == o.crash_at) {
      std::fprintf(stderr, "ctwin-synthetic-trainer: injected crash in step %lld\n", s);
      std::abort();
    }
    if (faulty && s == o.hang_at) {
      std::fprintf(stderr, "ctwin-synthetic-trainer: injected hang in step %lld\n", s);
      for (;;) ::pause();
    }
    if (faulty && s == o.nan_at) {  // a loss gone NaN: the step's update must not land
      std::fprintf(stderr, "ctwin-synthetic-trainer: loss is NaN at step %lld\n", s);
      beat("nan %lld", s);
      return 4;
    }
    if (lockstep) lockstep->barrier(s);  // the step's all-reduce
    state.write_stripe(static_cast<int>(s % kStripes), stripe_value(s));
    step = s;
    // A loss that falls as training goes; from --spike-at-step on (the faulty rank), six times it.
    const double loss = 3.0 / std::sqrt(1.0 + static_cast<double>(s) / 50.0) * (faulty && o.spike_at >= 0 && s >= o.spike_at ? 6.0 : 1.0);
    beat("step %lld %.6f %.6f", s, std::chrono::duration<double>(Clock::now() - start).count(), loss);
    if (cadence.saves_at(s, o.checkpoint_every) || checkpoint_requested.exchange(false)) save(s);
    say_persist_health(false);
    if (stop_requested) {
      if (saved != s) save(s);
      beat("stopped %lld", s);
      return 0;
    }
  }
  // The last checkpoint reaches the disk before the run is done, however long a full disk lasts:
  // the persister retries, and the failure is said again each second (a sign of life, well within
  // any hang timeout).
  while (!o.persist_dir.empty() && saved >= 0) {
    try {
      if (engine.wait_persisted(saved, 1)) break;
    } catch (const ctwin::flash::FlashError& e) {
      if (e.kind() != ctwin::flash::ErrorKind::Persist) throw;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    say_persist_health(true);
    if (stop_requested) {  // the snapshot stays in shared memory
      beat("stopped %lld", step);
      return 0;
    }
  }
  say_persist_health(false);
  beat("done %lld", step);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  if (const char* path = std::getenv("CTWIN_HEARTBEAT_SOCKET"); path && std::strlen(path) < sizeof heartbeat_to.sun_path) {
    heartbeat_to.sun_family = AF_UNIX;
    std::snprintf(heartbeat_to.sun_path, sizeof heartbeat_to.sun_path, "%s", path);
    heartbeat_fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const timeval patience{2, 0};
    ::setsockopt(heartbeat_fd, SOL_SOCKET, SO_SNDTIMEO, &patience, sizeof patience);
  }
  if (const char* rank = std::getenv("LOCAL_RANK")) local_rank = std::atoi(rank);
  std::signal(SIGPIPE, SIG_IGN);  // a supervisor gone away must not kill the step
  std::signal(SIGUSR1, [](int) { checkpoint_requested = true; });
  std::signal(SIGTERM, [](int) { stop_requested = true; });
  try {
    return run(o);
  } catch (const ctwin::CannotRunHere& e) {
    std::fprintf(stderr, "ctwin-synthetic-trainer: cannot run here: %s\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ctwin-synthetic-trainer: %s\n", e.what());
    return 1;
  }
}
