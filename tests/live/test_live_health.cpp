// The health monitors against a fake libnvidia-ml (tests/live/fake_nvml.c, driven by a state file
// rewritten between polls): Xid events, ECC counters, row remapping, NVLink, throttled clocks, a
// lost GPU, NVML event waits that time out, and a wedged driver. Then Xid lines from a kernel log
// as they are appended, and the live ledger's arithmetic.

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "live/health/health_watch.hpp"
#include "live/health/kernel_log_tail.hpp"
#include "live/health/nvml_monitor.hpp"
#include "live/supervisor/actuators.hpp"
#include "live/job/heartbeat.hpp"
#include "live/job/live_ledger.hpp"
#include "live/job/progress_book.hpp"
#include "live/job/step_time_watch.hpp"

using namespace ctwin::live;

namespace {

//! Points NVML at the fake and its state at a fresh file for this test.
struct FakeNvml {
  std::string state;
  explicit FakeNvml(const std::string& name) {
    state = (std::filesystem::temp_directory_path() / ("ctwin-fake-nvml-" + name + "-" + std::to_string(::getpid()))).string();
    ::setenv("CTWIN_NVML_LIBRARY", CTWIN_FAKE_NVML, 1);
    ::setenv("CTWIN_FAKE_NVML_STATE", state.c_str(), 1);
  }
  ~FakeNvml() { std::filesystem::remove(state); }
  void write(const std::string& text) const { std::ofstream(state) << text; }
  void append(const std::string& text) const { std::ofstream(state, std::ios::app) << text; }
};

std::unique_ptr<NvmlMonitor> open_monitor() {
  std::string why;
  auto m = NvmlMonitor::open({}, why);
  INFO(why);
  REQUIRE(m);
  return m;
}

//! The event log's kind for what the health policy makes of an event.
std::string kind_of(const HealthEvent& e) {
  switch (e.judged().response) {
    case ctwin::HealthResponse::Fault: return "fault";
    case ctwin::HealthResponse::SlowBegin: return "slow_begin";
    case ctwin::HealthResponse::SlowEnd: return "slow_end";
    default: return "health";
  }
}

const HealthEvent* find(const std::vector<HealthEvent>& events, const std::string& kind, int gpu, int xid = -1) {
  for (const auto& e : events)
    if (kind_of(e) == kind && e.gpu == gpu && (xid < 0 || e.judged().xid == xid)) return &e;
  return nullptr;
}

}  // namespace

TEST_CASE("nvml monitor: an Xid 79 event and uncorrected ECC errors become faults on the right GPU", "[live][health]") {
  FakeNvml fake("xid");
  fake.write("gpus 2\nnvlink 0 0 up\n");
  auto monitor = open_monitor();
  CHECK(monitor->gpu_count() == 2);
  CHECK(monitor->pci_bus_ids()[1] == "00000000:28:00.0");
  CHECK(monitor->poll(0).empty());  // the baseline of a healthy machine says nothing

  fake.append("xid 1 79\necc 0 corrected 7\necc 0 uncorrected 1\n");
  const auto events = monitor->poll(50);
  const HealthEvent* xid = find(events, "fault", 1, 79);
  REQUIRE(xid);
  CHECK(xid->source == "nvml");
  const HealthEvent* dbe = find(events, "fault", 0, 48);
  REQUIRE(dbe);
  CHECK(dbe->detail == "ecc_uncorrected=+1");
  const HealthEvent* sbe = find(events, "health", 0);
  REQUIRE(sbe);
  CHECK(sbe->detail == "ecc_corrected=+7");
  CHECK(events.size() == 3);

  // The same readings again: nothing new, and the Xid is not delivered twice.
  CHECK(monitor->poll(20).empty());
}

TEST_CASE("nvml monitor: every GPU's identity - UUID, bus id and model - as NVML gives it", "[live][health]") {
  FakeNvml fake("identity");
  fake.write("gpus 2\n");
  auto monitor = open_monitor();
  const auto& ids = monitor->identities();
  REQUIRE(ids.size() == 2);
  CHECK(ids[1].uuid == "GPU-00000000-0000-0000-0000-000000000001");
  CHECK(ids[1].pci_bus_id == "00000000:28:00.0");
  CHECK(ids[1].model == "NVIDIA H100 80GB HBM3");
  CHECK(HealthWatch(std::move(monitor), 0.05, 5).identities()[0].uuid == "GPU-00000000-0000-0000-0000-000000000000");
}

TEST_CASE("nvml monitor: an event wait that times out reports nothing and takes its timeout", "[live][health][timing]") {
  FakeNvml fake("timeout");
  fake.write("gpus 1\n");
  auto monitor = open_monitor();
  monitor->poll(0);
  const auto start = std::chrono::steady_clock::now();
  CHECK(monitor->poll(150).empty());
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(waited >= 0.14);
  CHECK(waited < 2.0);
}

TEST_CASE("nvml monitor: row remapping, NVLink, throttled clocks, temperature and a lost GPU", "[live][health]") {
  FakeNvml fake("links");
  fake.write("gpus 2\nnvlink 0 0 up\nnvlink 0 1 up\nclocks 0 1980 1980\n");
  auto monitor = open_monitor();
  monitor->poll(0);
  fake.write("gpus 2\nnvlink 0 0 up\nnvlink 0 1 down\nnvlink_errors 0 0 12\nclocks 0 990 1980\nthrottle 0 0x40\n"
             "temperature 0 91\nremap 0 1 0\nlost 1\n");
  const auto events = monitor->poll(0);
  const HealthEvent* link = find(events, "fault", 0, 74);
  REQUIRE(link);
  CHECK(link->detail == "nvlink=1 down");
  const HealthEvent* slow = find(events, "slow_begin", 0);
  REQUIRE(slow);
  CHECK(slow->value == Approx(0.5));
  CHECK(slow->detail == "reasons=0x40");
  const HealthEvent* lost = find(events, "fault", 1, 79);
  REQUIRE(lost);
  CHECK(lost->detail == "gpu_lost");
  int health = 0;
  for (const auto& e : events) health += kind_of(e) == "health";
  CHECK(health == 3);  // NVLink errors, temperature, remap pending
  CHECK(monitor->last()[0].temperature_c == 91);

  fake.write("gpus 2\nnvlink 0 0 up\nnvlink 0 1 down\nnvlink_errors 0 0 12\nclocks 0 1980 1980\nlost 1\n");
  const auto later = monitor->poll(0);
  CHECK(find(later, "slow_end", 0));
  CHECK(!find(later, "fault", 1));  // still lost: said once
}

TEST_CASE("nvml health watch: a driver that stops answering is a fault, said once", "[live][health][timing]") {
  FakeNvml fake("stall");
  fake.write("gpus 1\n");
  HealthWatch watch(open_monitor(), 0.05, 0.3);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  CHECK(watch.take().empty());
  fake.write("gpus 1\nstall 1.5\n");
  std::vector<HealthEvent> seen;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    for (auto& e : watch.take()) seen.push_back(e);
  }
  REQUIRE(seen.size() == 1);
  CHECK(kind_of(seen[0]) == "fault");
  CHECK(seen[0].judged().xid == 79);
  CHECK_FALSE(seen[0].judged().trainer_can_save);
  CHECK(seen[0].detail == "nvml_unresponsive");
  fake.write("gpus 1\n");  // let the stuck poll finish before the fake's file goes
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
}

TEST_CASE("nvml: a machine without a driver says why", "[live][health]") {
  FakeNvml fake("nodriver");
  fake.write("init_fails\n");
  std::string why;
  CHECK(!NvmlMonitor::open({}, why));
  CHECK(why.find("Driver Not Loaded") != std::string::npos);
  ::setenv("CTWIN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  CHECK(!NvmlMonitor::open({}, why));
  CHECK(why.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
}

TEST_CASE("kernel log tail: journald's JSON lines (journalctl -k -f -o json) - an Xid on its GPU, a broken line skipped", "[live][health]") {
  const auto path = std::filesystem::temp_directory_path() / ("ctwin-kern-json-" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << "";
  KernelLogTail tail(path.string(), {"00000000:18:00.0", "00000000:28:00.0"});
  std::ofstream(path, std::ios::app)
      << R"({"__REALTIME_TIMESTAMP":"1711020874000000","_HOSTNAME":"node-17","MESSAGE":"NVRM: Xid (PCI:0000:28:00): 79, pid=1, GPU has fallen)"
      << "\n"  // cut off: skipped, and the lines after it still count
      << R"({"__REALTIME_TIMESTAMP":"1711020875000000","_HOSTNAME":"node-17","_TRANSPORT":"kernel","MESSAGE":"NVRM: Xid (PCI:0000:18:00): 48, pid=7, DBE"})"
      << "\n"
      << R"({"__REALTIME_TIMESTAMP":"1711020876000000","MESSAGE":"usb 1-1: new device"})" << "\n";
  const auto events = tail.poll();
  std::filesystem::remove(path);
  REQUIRE(events.size() == 1);
  CHECK(events[0].xid == 48);
  CHECK(events[0].gpu == 0);
}

TEST_CASE("kernel log tail: Xid lines appended after the start, on the GPU of their bus id", "[live][health]") {
  const auto path = std::filesystem::temp_directory_path() / ("ctwin-kern-" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << "Mar 21 13:34:30 node-17 kernel: NVRM: Xid (PCI:0000:18:00): 13, an old one\n";
  KernelLogTail tail(path.string(), {"00000000:18:00.0", "00000000:28:00.0"});
  CHECK(tail.poll().empty());  // what was there before the tail started is history
  std::ofstream(path, std::ios::app) << "Mar 21 13:34:34 node-17 kernel: NVRM: Xid (PCI:0000:28:00): 79, pid=1, GPU has fallen off the bus.\n"
                                     << "Mar 21 13:34:35 node-17 kernel: usb 1-1: new device\n"
                                     << "[ 1234.5] NVRM: Xid (0000:18:00): 48, DBE";  // not finished yet
  auto events = tail.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].xid == 79);
  CHECK(events[0].gpu == 1);
  CHECK(events[0].source == "kernel-log");
  std::ofstream(path, std::ios::app) << " (row remap pending)\n";
  events = tail.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].xid == 48);
  CHECK(events[0].gpu == 0);
  // Rotated: the new file is read from its start.
  std::ofstream(path) << "[ 2.0] NVRM: Xid (PCI:0000:99:00): 74, link\n";
  events = tail.poll();
  REQUIRE(events.size() == 1);
  CHECK(events[0].gpu == -1);  // a bus id no GPU here has
  std::filesystem::remove(path);
}

TEST_CASE("kernel log tail: a malformed or hostile line is skipped, and the lines after it still count", "[live][health]") {
  const auto path = std::filesystem::temp_directory_path() / ("ctwin-kern-bad-" + std::to_string(::getpid()) + ".log");
  std::ofstream(path) << "";
  KernelLogTail tail(path.string(), {"00000000:18:00.0"});
  CHECK(tail.poll().empty());
  // A short zone once threw out of the tail and ended `ctwin live run` (and the trainer with it).
  std::ofstream(path, std::ios::app) << "2024-03-21T13:34:34+01:0 node-1 kernel: NVRM: Xid (PCI:0000:18:00): 79, x\n"
                                     << "2024-03-21T13:34:35+01:00 node-1 root: NVRM: Xid (PCI:0000:18:00): 79, a fake\n"
                                     << std::string(100'000, 'x') << "\n"
                                     << "2024-03-21T13:34:36+01:00 node-1 kernel: NVRM: Xid (PCI:0000:18:00): 48, DBE\n";
  std::vector<ctwin::live::HealthEvent> events;
  REQUIRE_NOTHROW(events = tail.poll());
  REQUIRE(events.size() == 1);
  CHECK(events[0].xid == 48);
  std::filesystem::remove(path);
}

TEST_CASE("actuator commands: every substitution is one shell word", "[live][supervisor]") {
  using ctwin::live::fill_command;
  CHECK(fill_command("scontrol update nodename={host} state=drain", 3, "gpu-17", 2) ==
        "scontrol update nodename=gpu-17 state=drain");
  // `--host 'h;touch X;#' --execute` once ran touch.
  CHECK(fill_command("kubectl cordon {host}", 3, "h;touch X;#", -1) == "kubectl cordon 'h;touch X;#'");
  CHECK(fill_command("echo {host}", 0, "it's", -1) == "echo 'it'\\''s'");
  CHECK(fill_command("reset {gpu} on {node}", 4, "h", 1) == "reset 1 on 4");
  // Run through /bin/sh, the quoted word stays one argument: nothing else runs.
  const auto marker = std::filesystem::temp_directory_path() / ("ctwin-actuator-" + std::to_string(::getpid()));
  std::filesystem::remove(marker);
  ctwin::live::ActuatorCommands config;
  config.execute = true;
  config.timeout_s = 10;
  const auto r = ctwin::live::actuate("test -n {host}", config, 0, "x; touch " + marker.string(), -1);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("trainer heartbeat lines parse - anything else is ignored", "[live][supervisor]") {
  auto m = parse_trainer_message("restored 30 memory 0.0012");
  CHECK(m.kind == TrainerMessage::Kind::Restored);
  CHECK(m.step == 30);
  CHECK(m.source == "memory");
  CHECK(m.seconds == Approx(0.0012));
  CHECK(parse_trainer_message("step 31 0.5").kind == TrainerMessage::Kind::Step);
  CHECK(parse_trainer_message("nan 37").kind == TrainerMessage::Kind::Nan);
  CHECK(parse_trainer_message("done 60").kind == TrainerMessage::Kind::Done);
  CHECK(parse_trainer_message("step x").kind == TrainerMessage::Kind::Unknown);
  CHECK(parse_trainer_message("step 3").kind == TrainerMessage::Kind::Unknown);
  CHECK(parse_trainer_message("loss 3.2").kind == TrainerMessage::Kind::Unknown);
  CHECK(parse_trainer_message("step 31 0.5 2.75 rank=1").loss == Approx(2.75));
  CHECK(parse_trainer_message("step 31 0.5 rank=1").rank == 1);
  CHECK_FALSE(parse_trainer_message("step 31 0.5 rank=1").loss);
  CHECK(parse_trainer_message("step 31 0.5 lots rank=1").kind == TrainerMessage::Kind::Unknown);
  const auto section = parse_trainer_message("section 31 0.0402 2 rank=5");  // a rank's compute, its stage
  CHECK(section.kind == TrainerMessage::Kind::Section);
  CHECK(section.seconds == Approx(0.0402));
  CHECK(section.group == 2);
  CHECK(section.rank == 5);
  CHECK(parse_trainer_message("section 31 0.04").kind == TrainerMessage::Kind::Unknown);  // no group
  CHECK(parse_trainer_message("section 31 0.04 -1").kind == TrainerMessage::Kind::Unknown);
  // Seconds that cannot become the ledger's microseconds are not messages.
  for (const char* hostile : {"step 31 nan", "step 31 inf", "step 31 -1", "step 31 1e300", "checkpoint 3 1e20",
                              "restored 30 memory nan", "step 99999999999999999999 0.5"})
    CHECK(parse_trainer_message(hostile).kind == TrainerMessage::Kind::Unknown);
}

TEST_CASE("live ledger: a rollback moves the undone steps' productive time to lost progress - the sum is the wall", "[live][supervisor]") {
  using ctwin::Category;
  const auto t0 = LiveLedger::Clock::now();
  auto at = [&](int ms) { return t0 + std::chrono::milliseconds(ms); };
  LiveLedger l(t0);
  l.split(Category::CheckpointRestore, 2000, Category::Restart, at(10));  // launch: 2 ms restore of 10
  CHECK(l.rolled_back_to(-1) == 0);
  for (int s = 1; s <= 5; ++s) {
    l.charge(Category::Productive, at(10 + 100 * s));
    l.step_done(s);
    if (s == 2) l.charge(Category::CheckpointSave, at(10 + 100 * s + 5)), l.step_done(2);
  }
  l.charge(Category::LostProgress, at(560));  // the crash in step 6
  l.charge(Category::Restart, at(600));
  l.split(Category::CheckpointRestore, 1000, Category::Restart, at(620));
  CHECK(l.rolled_back_to(2) == Approx(0.295).margin(1e-9));  // steps 3, 4, 5 (step 3 began after the 5 ms save)
  const auto& ledger = l.ledger();
  CHECK(ledger[Category::Productive] == 200'000);
  CHECK(ledger[Category::LostProgress] == 295'000 + 50'000);
  CHECK(ledger[Category::CheckpointSave] == 5'000);
  CHECK(ledger[Category::CheckpointRestore] == 3'000);
  CHECK(ledger.total() == 620'000);
}

namespace {

//! A progress book fed one trainer's messages at the times they say: steps of given seconds.
struct Book {
  LiveLedger::Clock::time_point t = LiveLedger::Clock::now();
  LiveLedger ledger{t};
  int slow_rows = 0;
  ProgressBook book{ledger, [this](ctwin::Micros, ctwin::EventKind kind, const std::string&, double) { slow_rows += kind == ctwin::EventKind::SlowBegin; }};
  void launched(std::int64_t restored) {
    book.launched();
    book.apply(parse_trainer_message("restored " + std::to_string(restored) + (restored < 0 ? " none" : " memory") + " 0 rank=0"), t);
  }
  void step(std::int64_t n, double seconds) {
    t += std::chrono::microseconds(static_cast<long>(seconds * 1e6));
    book.apply(parse_trainer_message("step " + std::to_string(n) + " " + std::to_string(seconds) + " rank=0"), t);
  }
  double seconds(ctwin::Category c) const { return static_cast<double>(ledger.ledger()[c]) / 1e6; }
};

}  // namespace

TEST_CASE("progress book: a restart's slow first steps are restart time beyond the baseline, not degraded nor all productive",
          "[live][supervisor]") {
  using ctwin::Category;
  Book b;
  b.launched(-1);
  for (int n = 1; n <= 30; ++n) b.step(n, 0.1);  // warm-up, then the baseline: 0.1 s
  const double productive_before = b.seconds(Category::Productive);
  b.launched(30);  // a restart from step 30
  for (int n = 31; n <= 36; ++n) b.step(n, n <= 33 ? 0.4 : 0.1);  // three slow steps while caches fill
  CHECK(b.seconds(Category::Productive) - productive_before == Approx(0.6).margin(1e-4));  // six steps of 0.1 s
  CHECK(b.seconds(Category::Restart) == Approx(0.9).margin(1e-4));  // 3 x 0.3 s beyond the baseline
  CHECK(b.seconds(Category::Degraded) == 0);
  CHECK(b.slow_rows == 0);
}

TEST_CASE("progress book: a slowdown confirmed late is degraded from when its window turned", "[live][supervisor]") {
  using ctwin::Category;
  Book b;
  b.launched(-1);
  for (int n = 1; n <= 50; ++n) b.step(n, n <= 30 ? 0.1 : 0.4);  // from step 31 on, four times slower for good
  CHECK(b.slow_rows == 1);
  // The window's median turns at the third slow step; confirmed ten steps later, it counts from there.
  CHECK(b.seconds(Category::Degraded) == Approx(18 * 0.3).margin(1e-4));
  CHECK(b.ledger.ledger().total() == b.ledger.marked());
}

TEST_CASE("step time watch: a slowdown that lasts is found against the baseline - one slow step is not", "[live][supervisor]") {
  StepTimeWatch w(4, 3, 1.25, 1.1, 0, 1);
  for (double s : {1.0, 1.1, 0.9, 1.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);
  CHECK(w.baseline_s() == Approx(1.0));
  for (double s : {1.0, 3.0, 1.0, 1.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);  // a checkpoint's slow step
  CHECK(w.observe(2.0) == StepTimeWatch::Change::None);
  CHECK(w.observe(2.0) == StepTimeWatch::Change::SlowBegin);
  CHECK(w.slow());
  CHECK(w.speed() == Approx(0.5));
  CHECK(w.observe(1.2) == StepTimeWatch::Change::None);  // hysteresis: not yet below 1.1
  CHECK(w.observe(1.0) == StepTimeWatch::Change::None);
  CHECK(w.observe(1.0) == StepTimeWatch::Change::SlowEnd);
  CHECK(!w.slow());
}

TEST_CASE("step time watch: a slow stretch counts once it lasts, and the baseline follows the job's normal steps", "[live][supervisor]") {
  StepTimeWatch w(4, 3, 1.25, 1.1, 0, 5, 8);
  for (double s : {1.0, 1.0, 1.0, 1.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);
  // A data-loader stall: four slow steps, then normal again. The window's median stays high for
  // fewer than 5 steps: no slowdown.
  for (double s : {1.6, 1.6, 1.6, 1.6, 1.0, 1.0, 1.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);
  CHECK_FALSE(w.slow());
  // The job's normal steps drift to 1.2 s (a longer sequence): the baseline follows them.
  for (int i = 0; i < 10; ++i) CHECK(w.observe(1.2) == StepTimeWatch::Change::None);
  CHECK(w.baseline_s() == Approx(1.2));
  // A throttled GPU: twice as slow, for good. Counted once its window has stayed slow 5 steps.
  int begun_at = -1;
  for (int i = 0; i < 12 && begun_at < 0; ++i)
    if (w.observe(2.4) == StepTimeWatch::Change::SlowBegin) begun_at = i;
  CHECK(begun_at == 5);  // one step before the window's median turns, then 5 in a row
  CHECK(w.baseline_s() == Approx(1.2));  // slow steps never move it
  CHECK(w.speed() == Approx(0.5));
}

TEST_CASE("step time watch: the warm-up after a start or a restart is not a slowdown, one that lasts past it is", "[live][supervisor]") {
  StepTimeWatch w(4, 3, 1.25, 1.1, 3, 1);
  for (double s : {9.0, 5.0, 3.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);  // a cold start: not the baseline
  for (double s : {1.0, 1.1, 0.9, 1.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);
  CHECK(w.baseline_s() == Approx(1.0));
  w.restarted();
  for (double s : {4.0, 3.0, 2.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);  // restored state, caches, peers
  for (double s : {1.0, 1.0, 1.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);
  CHECK_FALSE(w.slow());
  w.restarted();
  for (double s : {4.0, 4.0, 4.0}) CHECK(w.observe(s) == StepTimeWatch::Change::None);
  CHECK(w.observe(2.0) == StepTimeWatch::Change::None);
  CHECK(w.observe(2.0) == StepTimeWatch::Change::None);
  CHECK(w.observe(2.0) == StepTimeWatch::Change::SlowBegin);  // slow past the warm-up: a slowdown
  CHECK(w.speed() == Approx(0.5));
}
