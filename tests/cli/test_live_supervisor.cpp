// `ctwin live run` supervising the synthetic trainer (CPU state, flash checkpoints in /dev/shm),
// with real processes, real signals and real time: a crash restored from shared memory at the
// right step, a hang, a NaN loss rolled back, an Xid from (fake) NVML carried out as the policy
// says, the precheck before a restart, Prometheus metrics while it runs, and bad input (exit 2).
// Every run's event log must read back as `ctwin validate` reads it, with a ledger that adds up.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "calibration/observed_run.hpp"
#include "core/event_log.hpp"
#include "support/fixtures.hpp"

namespace fs = std::filesystem;
using ctwin::test::run_ctwin;
using ctwin::test::run_ctwin_live;

namespace {

constexpr const char* kPolicy = R"({"schema_version": 1, "policies": {
  "checkpoint": {"type": "fixed", "interval": "1s"}, "hang_detection": {"factor": 5, "minimum": "1s"}}})";

//! A folder, a flash name and a policy file of the test's own; the slots go with it.
struct LiveRun {
  fs::path dir;
  std::string name;
  int code = -1;
  std::string output;
  ctwin::EventLog log;

  explicit LiveRun(const std::string& tag, const std::string& policy = kPolicy)
      : dir(fs::temp_directory_path() / ("ctwin-live-" + tag + "-" + std::to_string(::getpid()))),
        name("test-" + tag + "-" + std::to_string(::getpid())) {
    fs::remove_all(dir);
    fs::create_directories(dir / "persist");
    std::ofstream(dir / "policy.json") << policy;
  }
  ~LiveRun() {
    fs::remove_all(dir);
    for (int s = 0; s < 2; ++s) fs::remove("/dev/shm/ctwin-flash-" + name + "-r0-s" + std::to_string(s));
  }

  //! Supervises the synthetic trainer with ctwin-live (or, `through_ctwin`, with `ctwin live`),
  //! started by `launcher` when one is given (a command line that ends before the trainer's).
  void run(const std::string& options, const std::string& trainer, bool through_ctwin = false, const std::string& launcher = "") {
    const std::string events = (dir / "events.csv").string();
    const std::string args = "run --policy " + (dir / "policy.json").string() + " --events " + events + " --name " + name +
                             " --persist-dir " + (dir / "persist").string() + " " + options + " -- " + launcher +
                             (launcher.empty() ? "" : " ") + CTWIN_SYNTHETIC_TRAINER + " --state-bytes 4MiB --step-ms 10 " + trainer;
    std::tie(code, output) = through_ctwin ? run_ctwin("live " + args) : run_ctwin_live(args);
    std::ifstream in(events);
    log = ctwin::read_event_log(in, events);
  }

  //! Supervises any trainer command line (`env`: VAR=value words put before ctwin-live).
  void run_command(const std::string& options, const std::string& trainer, const std::string& env = "") {
    const std::string events = (dir / "events.csv").string();
    std::tie(code, output) = ctwin::test::run_program((env.empty() ? "" : "env " + env + " ") + CTWIN_LIVE_BINARY, "run --policy " + (dir / "policy.json").string() + " --events " + events + " --name " +
                                            name + " " + options + " -- " + trainer);
    std::ifstream in(events);
    log = ctwin::read_event_log(in, events);
  }

  std::vector<const ctwin::LoggedEvent*> rows(const std::string& kind) const {
    std::vector<const ctwin::LoggedEvent*> out;
    for (const auto& e : log.events)
      if (ctwin::to_string(e.kind) == kind) out.push_back(&e);
    return out;
  }

  //! The log reads as `ctwin validate` reads it: whole, ledger rows adding up to the wall time.
  ctwin::calib::ObservedRun observed() const {
    REQUIRE(log.report.malformed.empty());
    const auto run = ctwin::calib::observe_run(log);  // throws when the ledger does not add up
    REQUIRE(run.has_end);
    REQUIRE(run.ledger_s);
    return run;
  }
};

double ledger_s(const ctwin::calib::ObservedRun& run, ctwin::Category c) { return (*run.ledger_s)[static_cast<std::size_t>(c)]; }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

//! The value of the first sample whose line starts with `prefix`; -1 when there is none.
double metric_value(const std::string& text, const std::string& prefix) {
  for (auto at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
    if (at != 0 && text[at - 1] != '\n') continue;
    const auto end = text.find('\n', at);
    const auto space = text.rfind(' ', end);
    return std::stod(text.substr(space + 1, end - space - 1));
  }
  return -1;
}

std::string http_get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    [[maybe_unused]] auto sent = ::send(fd, request.data(), request.size(), 0);
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) response.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return response;
}

}  // namespace

TEST_CASE("live run: a crashed trainer restarts from shared memory at its last checkpoint and finishes", "[live][supervisor][process]") {
  LiveRun r("crash");
  r.run("--no-nvml --no-metrics", "--steps 60 --checkpoint-every 10 --crash-at-step 35");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("the trainer finished at step 60") != std::string::npos);
  // The restarted trainer checks every byte of the state it restored (exit 5 otherwise).
  const auto restores = r.rows("restore");
  REQUIRE(restores.size() == 1);
  CHECK(restores[0]->detail.rfind("source=memory step=30 ", 0) == 0);
  REQUIRE(r.rows("interrupted").size() == 1);
  CHECK(r.rows("interrupted")[0]->detail == "software_bug");
  CHECK(r.rows("fault")[0]->detail == "software_bug signal 6 (Aborted)");
  CHECK(r.rows("checkpoint").size() >= 6);  // 10, 20, 30, then 40, 50, 60 again

  const auto run = r.observed();
  CHECK(run.interruptions.at("software_bug") == 1);
  // Steps 31 to 34 and the crashed 35th were lost: about 50 ms, at least the 40 ms of the four steps.
  CHECK(ledger_s(run, ctwin::Category::LostProgress) >= 0.040);
  CHECK(ledger_s(run, ctwin::Category::LostProgress) < 0.5);
  CHECK(ledger_s(run, ctwin::Category::Productive) >= 0.60);  // 60 steps of 10 ms landed
}

TEST_CASE("live run: a hung trainer is found by its silent heartbeat and restarted", "[live][supervisor][process]") {
  LiveRun r("hang");
  r.run("--no-nvml --no-metrics", "--steps 30 --checkpoint-every 10 --hang-at-step 15");
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE(r.rows("interrupted").size() == 1);
  CHECK(r.rows("interrupted")[0]->detail == "nccl_hang");
  CHECK(r.rows("restore")[0]->detail.rfind("source=memory step=10 ", 0) == 0);
  const auto run = r.observed();
  // The timeout is max(1 s, 5 x the longest interval): about a second of silence is detection.
  CHECK(ledger_s(run, ctwin::Category::Detection) >= 0.9);
  CHECK(ledger_s(run, ctwin::Category::Detection) < 3.0);
}

TEST_CASE("live run: a NaN loss is silent corruption: rolled back to the last checkpoint", "[live][supervisor][process]") {
  LiveRun r("nan");
  r.run("--no-nvml --no-metrics --evict-cmd 'scontrol update nodename={host} state=drain' --host gpu-17",
        "--steps 40 --checkpoint-every 10 --nan-at-step 37");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.rows("rollback").size() == 1);
  CHECK(r.rows("restore")[0]->detail.rfind("source=memory step=30 ", 0) == 0);
  // The catalogue's sdc class is remediated by replacing the node: dry-run by default.
  REQUIRE(r.rows("evicted").size() == 1);
  CHECK(r.rows("evicted")[0]->detail == "sdc scontrol update nodename=gpu-17 state=drain (dry-run)");
  CHECK(r.observed().interruptions.at("sdc") == 1);
}

TEST_CASE("live run: a loss spike rolls back to the step before its onset, confirmed after the policy's loss_spike.confirm steps",
          "[live][supervisor][process]") {
  // The loss jumps six-fold at step 95. Confirmed at once (step 96), the spike stops the trainer
  // before its save of step 100 (four 25 ms steps later), and the node restores step 90, the last
  // saved before the onset. Confirmed 20 steps on (114), steps 100 and 110 are saved first and are
  // not clean; the engine keeps two steps, so none before the onset is left: the job restarts from
  // scratch, and says why.
  for (const int confirm : {2, 20}) {
    const std::string policy = R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"},
      "hang_detection": {"factor": 5, "minimum": "1s"}, "loss_spike": {"confirm": )" + std::to_string(confirm) + "}}}";
    LiveRun r("spike-" + std::to_string(confirm), policy);
    r.run("--no-nvml --no-metrics --host gpu-5", "--steps 140 --checkpoint-every 10 --spike-at-step 95 --step-ms 25");
    INFO("confirm " << confirm << "\n" << r.output);
    REQUIRE(r.code == 0);
    const auto faults = r.rows("fault");
    REQUIRE(faults.size() == 1);
    CHECK(faults[0]->detail.find("loss_spike from step 95") != std::string::npos);
    std::vector<int> saved_before;
    for (const auto* c : r.rows("checkpoint"))
      if (c->time_s <= faults[0]->time_s) saved_before.push_back(std::stoi(c->detail.substr(c->detail.find("step=") + 5)));
    const bool saved_100 = std::find(saved_before.begin(), saved_before.end(), 100) != saved_before.end();
    CHECK(saved_100 == (confirm == 20));
    const auto restores = r.rows("restore");  // a fresh start restores nothing and logs no row
    bool said = false;
    for (const auto* h : r.rows("health")) said |= h->detail.rfind("no checkpoint at or before step 94 is kept (steps 1", 0) == 0;
    if (confirm == 2) {
      REQUIRE(restores.size() == 1);
      CHECK(restores[0]->detail.find("step=90 ") != std::string::npos);
      CHECK_FALSE(said);
    } else {
      CHECK(restores.empty());
      CHECK(said);
      CHECK(r.output.find("the job restarts from scratch") != std::string::npos);
    }
    CHECK(r.observed().interruptions.at("sdc") == 1);
  }
}

TEST_CASE("live run: steps slower than the node's baseline are degraded time, between slow_begin and slow_end", "[live][supervisor][process]") {
  LiveRun r("slow");
  r.run("--no-nvml --no-metrics", "--steps 60 --checkpoint-every 100 --slow-from-step 25 --slowdown 4");
  INFO(r.output);
  REQUIRE(r.code == 0);
  REQUIRE_FALSE(r.rows("slow_begin").empty());
  CHECK(r.rows("slow_begin")[0]->detail.find("source=step_times") != std::string::npos);
  // It stays slow to the end (a busy machine may make one early step look slow and end it again).
  CHECK(r.rows("slow_begin").size() == r.rows("slow_end").size() + 1);
  const auto run = r.observed();
  // Steps 25 to 60 take 4x the baseline (40 ms instead of 10): about three quarters of the slow
  // time is degraded, about 1 s in all, and the productive time stays about 10 ms a step. The
  // slowdown is confirmed 13 slow steps in (3 to turn the window's median, 10 to confirm), and is
  // degraded from where the median turned: of the 36 slow steps, about 23 come after the row.
  // Said as shares of the time, which a busy machine stretches alike.
  const double degraded = ledger_s(run, ctwin::Category::Degraded);
  const double after_first = run.wall_s - r.rows("slow_begin").front()->time_s;
  const double after_last = run.wall_s - r.rows("slow_begin").back()->time_s;
  INFO("degraded " << degraded << " s; after the first slow_begin " << after_first << " s, after the last " << after_last << " s");
  CHECK(degraded > 0.5);
  CHECK(degraded > 0.45 * after_last);
  CHECK(degraded < 0.95 * after_first * 36 / 23);  // never more than the slow stretch
  CHECK(ledger_s(run, ctwin::Category::Productive) < degraded);
  CHECK(run.interruptions.empty());
}

TEST_CASE("live run: an Xid 79 from NVML stops the trainer and the policy's action is carried out", "[live][supervisor][health][process]") {
  const std::string policy = R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"},
    "xid_actions": {"79": "replace"}, "hang_detection": {"minimum": "2s"}}})";
  const auto state = fs::temp_directory_path() / ("ctwin-fake-nvml-run-" + std::to_string(::getpid()));
  std::ofstream(state) << "gpus 2\n";
  ::setenv("CTWIN_NVML_LIBRARY", CTWIN_FAKE_NVML, 1);
  ::setenv("CTWIN_FAKE_NVML_STATE", state.c_str(), 1);

  SECTION("dry-run: the eviction is logged and the trainer restarts here") {
    LiveRun r("xid-dry", policy);
    std::thread strike([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      std::ofstream(state, std::ios::app) << "xid 1 79\n";
    });
    r.run("--health-interval 50ms --no-metrics --evict-cmd 'kubectl cordon {host}' --host gpu-3",
          "--steps 100 --checkpoint-every 10");
    strike.join();
    INFO(r.output);
    REQUIRE(r.code == 0);
    const auto faults = r.rows("fault");
    REQUIRE(faults.size() == 1);
    CHECK(faults[0]->code == 79);
    CHECK(faults[0]->gpu == 1);
    CHECK(faults[0]->detail == "xid79_fallen_off_bus xid source=nvml");
    REQUIRE(r.rows("evicted").size() == 1);
    CHECK(r.rows("evicted")[0]->detail == "xid79_fallen_off_bus kubectl cordon gpu-3 (dry-run)");
    CHECK(r.rows("restore").size() == 1);
    CHECK(r.observed().interruptions.at("xid79_fallen_off_bus") == 1);
  }
  SECTION("executed: the node leaves the job, exit 1") {
    LiveRun r("xid-exec", policy);
    std::ofstream(state, std::ios::app) << "xid 0 79\n";
    const auto marker = r.dir / "evicted-by-test";
    r.run("--health-interval 50ms --no-metrics --execute --evict-cmd 'touch " + marker.string() + "'",
          "--steps 1000 --checkpoint-every 10");
    INFO(r.output);
    CHECK(r.code == 1);
    CHECK(fs::exists(marker));
    CHECK(r.output.find("evicted: the job goes on elsewhere") != std::string::npos);
    // The master planned the restart; the node's own command took it out before it ran anything.
    REQUIRE(r.rows("evicted").size() == 1);
    CHECK(r.rows("evicted")[0]->detail.find("(exit 0)") != std::string::npos);
    CHECK(r.rows("restore").empty());
    r.observed();
  }
  fs::remove(state);
  ::unsetenv("CTWIN_FAKE_NVML_STATE");
}

TEST_CASE("live run: a row remap pending (NVML's flag, or Xid 63) is a GPU reset at a checkpoint, not a plain restart",
          "[live][supervisor][health][process]") {
  const auto state = fs::temp_directory_path() / ("ctwin-fake-nvml-remap-" + std::to_string(::getpid()));
  for (const std::string signal : {"remap 0 1 0", "xid 0 63"}) {
    DYNAMIC_SECTION(signal) {
      std::ofstream(state) << "gpus 1\n";
      ::setenv("CTWIN_NVML_LIBRARY", CTWIN_FAKE_NVML, 1);
      ::setenv("CTWIN_FAKE_NVML_STATE", state.c_str(), 1);
      LiveRun r("remap");
      std::thread strike([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        std::ofstream(state, std::ios::app) << signal << "\n";
      });
      r.run("--health-interval 50ms --no-metrics --reset-gpu-cmd 'nvidia-smi -r -i {gpu}'", "--steps 100 --checkpoint-every 1000");  // no periodic save
      strike.join();
      INFO(r.output);
      REQUIRE(r.code == 0);
      // A checkpoint asked for; at that step the job stops, the GPU is reset (dry-run), it restores that step.
      REQUIRE(r.rows("checkpoint").size() >= 1);
      const std::string saved = r.rows("checkpoint")[0]->detail;  // "step=N"
      const auto faults = r.rows("fault");
      REQUIRE(faults.size() == 1);
      CHECK(faults[0]->detail.rfind("row_remap_pending ", 0) == 0);
      CHECK(faults[0]->code == 63);
      REQUIRE(r.rows("to_repair").size() == 1);
      CHECK(r.rows("to_repair")[0]->detail.find("nvidia-smi -r -i 0 (dry-run)") != std::string::npos);
      REQUIRE(r.rows("restore").size() == 1);
      CHECK(r.rows("restore")[0]->detail.find(saved + " ") != std::string::npos);
      CHECK(r.observed().interruptions.at("row_remap_pending") == 1);
    }
  }
  fs::remove(state);
  ::unsetenv("CTWIN_FAKE_NVML_STATE");
}

TEST_CASE("live run: the precheck before a restart evicts a node that fails it", "[live][supervisor][process]") {
  const std::string policy = R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"},
    "precheck": {"enabled": true, "duration": "1s"}, "hang_detection": {"minimum": "2s"}}})";
  // The default precheck runs the supervising program again: ctwin-live precheck, or ctwin live precheck.
  for (const bool through_ctwin : {false, true}) {
    DYNAMIC_SECTION((through_ctwin ? "ctwin live" : "ctwin-live") << ": its precheck on the CPU backend passes") {
      LiveRun r(through_ctwin ? "precheck-pass-ctwin" : "precheck-pass", policy);
      r.run("--no-nvml --no-metrics --precheck-backend cpu", "--steps 30 --checkpoint-every 10 --crash-at-step 15", through_ctwin);
      INFO(r.output);
      REQUIRE(r.code == 0);
      bool ran = false;
      for (const auto* e : r.rows("health")) ran |= e->detail == "precheck exit 0";
      CHECK(ran);
      CHECK(r.rows("evicted").empty());
      CHECK(ledger_s(r.observed(), ctwin::Category::Diagnosis) > 0.01);  // the precheck's time is diagnosis
    }
  }
  SECTION("a failing check (exit 1) evicts") {
    LiveRun r("precheck-fail", policy);
    r.run("--no-nvml --no-metrics --precheck-cmd 'exit 1'", "--steps 30 --checkpoint-every 10 --crash-at-step 15");
    INFO(r.output);
    REQUIRE(r.code == 0);
    REQUIRE(r.rows("evicted").size() == 1);
    CHECK(r.rows("evicted")[0]->detail == "software_bug (not configured)");
    // Diagnosed once, when the decision reached the node: after its check, before the eviction's row.
    REQUIRE(r.rows("diagnosed").size() == 1);
    CHECK(r.rows("diagnosed")[0]->time_s <= r.rows("evicted")[0]->time_s);
  }
}

TEST_CASE("live run: Prometheus metrics on 127.0.0.1 while the trainer runs", "[live][supervisor][process]") {
  LiveRun r("metrics");
  const int port = free_port();
  std::string scraped;
  std::thread scraper([&] {
    for (int i = 0; i < 60 && scraped.empty(); ++i) {  // a scrape while steps are being made
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const auto got = http_get(port, "/metrics");
      if (metric_value(got, "ctwin_trainer_up{") == 1 && metric_value(got, "ctwin_trainer_step{") > 0) scraped = got;
    }
  });
  r.run("--no-nvml --metrics 127.0.0.1:" + std::to_string(port), "--steps 200 --checkpoint-every 10");
  scraper.join();
  INFO(r.output);
  REQUIRE(r.code == 0);
  INFO(scraped);
  CHECK(scraped.rfind("HTTP/1.1 200 OK", 0) == 0);
  CHECK(scraped.find("# TYPE ctwin_ledger_seconds_total counter") != std::string::npos);
  CHECK(metric_value(scraped, "ctwin_ledger_seconds_total{host=") >= 0);
  CHECK(scraped.find(",category=\"productive\"} ") != std::string::npos);
  CHECK(scraped.find("ctwin_goodput_ratio{host=") != std::string::npos);
}

TEST_CASE("live run: a bad policy file or trainer is exit 2 naming the problem", "[live][supervisor][process]") {
  LiveRun r("bad", R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"},
    "hang_detection": {"factor": "five"}}})");
  r.run("--no-nvml --no-metrics", "--steps 5");
  CHECK(r.code == 2);
  CHECK(r.output.find("policy.json: /policies/hang_detection/factor:") != std::string::npos);
  CHECK(!fs::exists(r.dir / "events.csv"));

  std::ofstream(r.dir / "policy.json") << kPolicy;
  auto [code, output] = run_ctwin_live("run --policy " + (r.dir / "policy.json").string() + " --no-nvml --no-metrics -- /nonexistent/trainer");
  CHECK(code == 2);
  CHECK(output.find("/nonexistent/trainer: cannot run the trainer: No such file or directory") != std::string::npos);
  std::tie(code, output) = run_ctwin_live("run --policy " + (r.dir / "missing.json").string() + " -- true");
  CHECK(code == 2);
  // Metrics bind to an explicit address: ":9401" (every interface) and "host:" are refused.
  for (const std::string metrics : {":9401", "127.0.0.1:", "127.0.0.1:70000"}) {
    std::tie(code, output) = run_ctwin_live("run --policy " + (r.dir / "policy.json").string() + " --no-nvml --metrics " + metrics + " -- true");
    CHECK(code == 2);
    CHECK(output.find("--metrics " + metrics + ": expected HOST:PORT (an explicit address") != std::string::npos);
  }
}

TEST_CASE("live run: a launcher that starts its workers as torchrun does is supervised, and leaves nothing behind", "[live][supervisor][process]") {
  // torchrun closes inherited descriptors and starts each worker in a session of its own: an
  // inherited heartbeat pipe never reached the trainer, which was killed as hung; and a process a
  // worker left in its own session outlived the restart and the supervisor.
  LiveRun r("launcher");
  const std::string orphans = (r.dir / "orphans").string();
  r.run("--no-nvml --no-metrics", "--steps 30 --checkpoint-every 10 --crash-at-step 15", false,
        "python3 " + ctwin::test::repo_file("tests/live/torchrun_like.py") + " --orphans " + orphans + " --");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.rows("restart").size() == 1);
  REQUIRE(r.rows("restore").size() == 1);
  CHECK(r.rows("restore")[0]->detail.rfind("source=memory step=10 ", 0) == 0);
  const auto run = r.observed();
  CHECK(ledger_s(run, ctwin::Category::Productive) > 0.2);
  // No process of an earlier attempt was alive when the next began, nor is any now.
  CHECK_FALSE(fs::exists(orphans + ".survivors"));
  std::ifstream pids(orphans);
  int count = 0;
  for (long pid; pids >> pid; ++count) {
    INFO("pid " << pid);
    CHECK((::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH));
  }
  CHECK(count == 2);  // one per attempt
}

TEST_CASE("live run --passive: a trainer not changed for ctwin is supervised through its output", "[live][supervisor][process]") {
  // Without heartbeats such a trainer was killed as hung after the startup timeout. Its Megatron
  // lines (stdout) or tqdm bar (stderr) are the heartbeats now, and its first line after a restart
  // says where it resumed.
  for (const std::string style : {"megatron", "tqdm"}) {
    DYNAMIC_SECTION(style) {
      LiveRun r("passive-" + style);
      r.run_command("--passive --no-nvml --no-metrics --startup-timeout 20s",
                    "python3 " + ctwin::test::repo_file("tests/live/unchanged_trainer.py") + " " + style + " " +
                        (r.dir / "state").string() + " 30 15");
      INFO(r.output);
      REQUIRE(r.code == 0);
      CHECK(r.rows("restart").size() == 1);
      REQUIRE(r.rows("restore").size() == 1);
      CHECK(r.rows("restore")[0]->detail.rfind("source=unknown step=10 ", 0) == 0);
      // The trainer's output still reaches the operator, through the supervisor.
      CHECK(r.output.find(style == "megatron" ? "iteration       30/" : "30/30 [") != std::string::npos);
      const auto run = r.observed();
      CHECK(ledger_s(run, ctwin::Category::Productive) > 0.3);       // 30 steps of 20 ms at least
      CHECK(ledger_s(run, ctwin::Category::LostProgress) > 0.05);    // steps 11 to 14, rolled back
      CHECK(run.interruptions.size() == 1);
    }
  }
}

TEST_CASE("live run: a crash with no hardware signal is named as the scenario names it", "[live][supervisor][process]") {
  // The default scenario's policies.live_stops: a crash is its class "software", not the
  // catalogue's "software_bug", so that validate compares the log with the scenario class by class.
  std::ifstream in(ctwin::test::repo_file("scenarios/default.json"));
  const std::string scenario((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LiveRun r("scenario-class", scenario);
  r.run("--no-nvml --no-metrics", "--steps 30 --checkpoint-every 10 --crash-at-step 15");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto run = r.observed();
  CHECK(run.interruptions.count("software") == 1);
  CHECK(run.interruptions.count("software_bug") == 0);
}

TEST_CASE("live run: the log starts with the wall clock and the host, and Slurm names the node", "[live][supervisor][process]") {
  LiveRun r("slurm-identity");
  r.run_command("--no-nvml --no-metrics", std::string(CTWIN_SYNTHETIC_TRAINER) + " --state-bytes 1MiB --step-ms 5 --steps 10",
                "SLURM_NODEID=3 SLURMD_NODENAME=gpu-node-3");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const auto start = r.rows("start");
  REQUIRE(start.size() == 1);
  CHECK(start[0]->time_s == 0);
  CHECK(start[0]->node == 3);
  CHECK(start[0]->detail.find(" host=gpu-node-3") != std::string::npos);
  // utc=YYYY-MM-DDTHH:MM:SS.uuuuuuZ, within a day of now
  const auto at = start[0]->detail.find("utc=");
  REQUIRE(at == 0);
  const std::string utc = start[0]->detail.substr(4, 27);
  CHECK(utc.size() == 27);
  CHECK(utc.back() == 'Z');
  for (const auto& e : r.log.events) CHECK((e.node == 3 || e.node == -1 || e.kind == ctwin::EventKind::Ledger));
  CHECK(r.observed().start == start[0]->detail);
}

TEST_CASE("live run: a trainer silent after saying done is on its way out, not hung", "[live][supervisor][process]") {
  // The hang timeout here is 1 s; the trainer exits 3 s after `done` (as a DDP job restored at its
  // last step does, in its teardown): it finished, with no interruption.
  LiveRun r("slow-exit");
  r.run_command("--no-nvml --no-metrics --stop-grace 20s", "python3 " + ctwin::test::repo_file("tests/live/slow_exit_trainer.py") + " 3");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.rows("interrupted").empty());
  CHECK(r.output.find("the trainer finished at step 10") != std::string::npos);
}

namespace {

//! The live processes whose environment holds `variable` (NAME=value).
std::vector<pid_t> processes_with(const std::string& variable) {
  std::vector<pid_t> found;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream environ(entry.path() / "environ", std::ios::binary);
    const std::string block = '\0' + std::string((std::istreambuf_iterator<char>(environ)), std::istreambuf_iterator<char>());
    if (block.find('\0' + variable + '\0') != std::string::npos) found.push_back(std::stoi(name));
  }
  return found;
}

}  // namespace

TEST_CASE("live run: a supervisor killed outright leaves no trainer process behind, not even one deaf to SIGTERM in a session of its own",
          "[live][supervisor][process]") {
  // The trainer's death signal (SIGTERM) reached the launcher only; its workers in sessions of
  // their own got nothing, and torchrun's close can take 30 s twice over. Here neither the launcher
  // nor its worker stops on SIGTERM (a worker blocked in a collective): after the stop grace the
  // supervisor's guard kills them, wherever they were reparented.
  LiveRun r("orphans");
  std::ofstream(r.dir / "trainer.sh") << "trap '' TERM\nsetsid sh -c \"trap '' TERM; sleep 300\" &\nsleep 300\n";
  const std::string marker = "CTWIN_FLASH_NAME=" + r.name, output = (r.dir / "output.txt").string();
  const std::vector<std::string> argv = {CTWIN_LIVE_BINARY, "run", "--policy", (r.dir / "policy.json").string(), "--name", r.name, "--no-nvml",
                                         "--no-metrics", "--stop-grace", "1s", "--", "sh", (r.dir / "trainer.sh").string()};
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(out >= 0);
  std::fflush(nullptr);
  const pid_t supervisor = ::fork();
  if (supervisor == 0) {
    ::dup2(out, 1), ::dup2(out, 2);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out);
  REQUIRE(supervisor > 0);
  // The launcher, its worker's shell and their sleeps: caught running, not raced.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (processes_with(marker).size() < 3 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(processes_with(marker).size() >= 3);
  ::kill(supervisor, SIGKILL);
  ::waitpid(supervisor, nullptr, 0);
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);  // the grace is 1 s
  while (!processes_with(marker).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto left = processes_with(marker);
  for (const pid_t pid : left) ::kill(pid, SIGKILL);  // the test leaves nothing behind either way
  CHECK(left.empty());
  std::ifstream said(output);
  const std::string text((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(text.find("the supervisor died: its trainer's processes left after the stop grace are killed") != std::string::npos);
}
