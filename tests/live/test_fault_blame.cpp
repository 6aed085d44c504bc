// Which node a fault is blamed on (issue 36, item 4): the workers' own records of their failure
// (live/supervisor/worker_failures.hpp), the job master's choice between a hang, dated at its last
// sign of life, and a failure elsewhere before the hang was found, and a fault heard by a master
// killed before its decision.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/event_log.hpp"
#include "core/wall_clock.hpp"
#include "live/job/delivery_delay.hpp"
#include "live/job/job_master.hpp"
#include "live/supervisor/worker_failures.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"

using namespace ctwin;
using namespace ctwin::live;
namespace fs = std::filesystem;
using Clock = JobMaster::Clock;

namespace {

//! A record written `seconds_ago` (its modification time set so).
void write_record(const fs::path& path, const std::string& text, double seconds_ago) {
  std::ofstream(path) << text;
  const auto at = std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds_ago));
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
  const timespec times[2] = {{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)},
                             {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

Report report(const std::string& agent, std::int64_t generation, NodeState state, std::int64_t step,
              std::optional<std::vector<std::int64_t>> restorable = std::nullopt) {
  Report r;
  r.agent = agent;
  r.status = {generation, state, step, std::move(restorable)};
  return r;
}

//! The fault rows of an event log.
std::vector<LoggedEvent> fault_rows(const std::string& path) {
  std::ifstream in(path);
  std::vector<LoggedEvent> faults;
  for (const auto& e : read_event_log(in, path).events)
    if (e.kind == EventKind::Fault) faults.push_back(e);
  return faults;
}

struct Folder {
  fs::path path = fs::temp_directory_path() / ("ctwin-worker-failures-" + std::to_string(::getpid()));
  Folder() { fs::remove_all(path), fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("worker failures: the earliest record names the worker that failed first, and what it said", "[live][supervisor][unit]") {
  Folder f;
  CHECK_FALSE(first_worker_failure(f.path.string()));  // nothing recorded
  CHECK_FALSE(first_worker_failure((f.path / "gone").string()));
  std::ofstream(f.path / "rank-0.fatal");  // faulthandler's file, open from the start: empty is no failure
  write_record(f.path / "rank-2.error", "RuntimeError: [/gloo/transport/tcp/pair.cc:598] Connection closed by peer\ntrain.py:130 in main\n", 1.0);
  write_record(f.path / "rank-3.fatal",
               "Fatal Python error: Aborted\n\nCurrent thread 0x00007f0e (most recent call first):\n"
               "  File \"/work/examples/gpt/train.py\", line 142 in main\n  File \"/work/examples/gpt/train.py\", line 187 in <module>\n",
               1.2);
  auto first = first_worker_failure(f.path.string());
  REQUIRE(first);
  CHECK(first->rank == "3");
  CHECK(first->what == "Fatal Python error: Aborted at train.py:142 in main");
  CHECK(describe(*first).rfind("rank 3 failed first, at ", 0) == 0);
  // torchrun's copy of a worker's error file (torch's @record), whole seconds: earlier still here.
  write_record(f.path / kTorchErrorFile,
               R"({"message": {"message": "ValueError: bad batch", "extraInfo": {"py_callstack": "...", "timestamp": "1000"}}, "errorCode": 1})", 0.5);
  first = first_worker_failure(f.path.string());
  REQUIRE(first);
  CHECK(first->rank.empty());
  CHECK(first->what == "ValueError: bad batch (exit code 1)");
  CHECK(std::chrono::duration_cast<std::chrono::seconds>(first->at.time_since_epoch()).count() == 1000);
  // A hostile record is one bounded line, and a malformed error file is no record.
  fs::remove(f.path / kTorchErrorFile);
  write_record(f.path / "rank-1.error", std::string(5000, 'x') + "\nline\n", 5);
  first = first_worker_failure(f.path.string());
  REQUIRE(first);
  CHECK(first->rank == "1");
  CHECK(first->what.size() <= 300);
  CHECK(first->what.find('\n') == std::string::npos);
  fs::remove(f.path / "rank-1.error");
  write_record(f.path / kTorchErrorFile, "{not json", 10);
  CHECK(first_worker_failure(f.path.string())->rank == "3");
}

TEST_CASE("worker failures: a record's time on the steady clock does not move with when it is read", "[live][supervisor][unit]") {
  // CI: node 0's agent read its worker's record, killed its trainer's tree, and then converted the
  // stamp with a steady time taken before the kill: its collective error, after node 1's abort,
  // was dated the kill's length early and blamed. Read twice a second apart, the date stays.
  // No verdict from a clock: each reading is bracketed by the two clocks read before and after it,
  // so a load that delays any step only widens the bracket.
  Folder f;
  write_record(f.path / "rank-0.error", "RuntimeError: Connection closed by peer\n", 2.0);
  const auto record = first_worker_failure(f.path.string());
  REQUIRE(record);
  auto ns = [](auto t) { return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count(); };
  for (int reading = 0; reading < 2; ++reading) {
    if (reading == 1) std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto system_before = std::chrono::system_clock::now();
    const auto steady_before = std::chrono::steady_clock::now();
    const auto dated = on_steady_clock(record->at);
    const auto steady_after = std::chrono::steady_clock::now();
    const auto system_after = std::chrono::system_clock::now();
    // The steady clock's lead over the system clock, as this reading used it, lies between the
    // leads seen around it; a steady time taken a second early would fall a second outside.
    const auto lead = ns(dated) - ns(record->at);
    CHECK(lead >= ns(steady_before) - ns(system_after));
    CHECK(lead <= ns(steady_after) - ns(system_before));
  }
}

TEST_CASE("job master: a hang is dated at its last sign of life, a failure elsewhere before the hang was found is blamed", "[live][cluster][unit]") {
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "p.json");
  const RecoveryController controller(s);
  for (const bool failure_first : {true, false}) {
    DYNAMIC_SECTION((failure_first ? "the abort came before the hang was found" : "the crash came after the hang was found")) {
      Folder f;
      MasterOptions o;
      o.nnodes = 2;
      o.events_path = (f.path / "job.csv").string();
      auto now = Clock::now();
      JobMaster m(s, controller, o, now);
      m.join({"a", 0, "h0", "", false}, now);
      m.join({"b", 1, "h1", "", false}, now);
      for (const auto* agent : {"a", "b"}) m.report(report(agent, 1, NodeState::Stopped, -1, std::vector<std::int64_t>{}), now);
      for (const auto* agent : {"a", "b"}) m.report(report(agent, 1, NodeState::Running, 5), now);
      now += std::chrono::seconds(10);
      // Node 0 found its trainer silent for 3 s: dated 3 s back. It reports first, and the job stops.
      Report hang = report("a", 1, NodeState::Stopped, 5, std::vector<std::int64_t>{});
      hang.fault = FaultReport{classify_stop(s, LiveStop::Hang), "no heartbeat for 3s", -1, -1, 3.0};
      hang.fault->silent = true;
      CHECK(m.report(hang, now).what == PlanKind::Stop);
      // Node 1's worker aborted 2.9 s back (its record), or crashed only now, after the hang was found;
      // node 1 says so as it follows the job into generation 2.
      now += std::chrono::milliseconds(100);
      Report crash = report("b", 2, NodeState::Stopped, 5, std::vector<std::int64_t>{});
      crash.fault = FaultReport{classify_stop(s, LiveStop::Crash), "exit 1; rank 1 failed first", -1, -1, failure_first ? 2.9 : 0.0};
      crash.fault->generation = 1;
      m.report(crash, now);
      m.report(report("a", 2, NodeState::Stopped, 5, std::vector<std::int64_t>{}), now);
      CHECK(m.generation() == 2);
      m.close(now);
      const auto faults = fault_rows(o.events_path);
      REQUIRE(faults.size() == 1);
      CHECK(faults[0].node == (failure_first ? 1 : 0));
      CHECK(faults[0].detail.rfind(failure_first ? "software_bug exit 1" : "nccl_hang no heartbeat", 0) == 0);
    }
  }
}

TEST_CASE("job master: a fault heard by a master killed before its decision is decided on when it is back", "[live][cluster][unit]") {
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "p.json");
  const RecoveryController controller(s);
  Folder f;
  MasterOptions o;
  o.nnodes = 2;
  o.events_path = (f.path / "job.csv").string();
  o.journal_path = (f.path / "journal.json").string();
  auto now = Clock::now();
  {
    JobMaster m(s, controller, o, now);
    m.join({"a", 0, "h0", "", false}, now);
    m.join({"b", 1, "h1", "", false}, now);
    for (const auto* agent : {"a", "b"}) m.report(report(agent, 1, NodeState::Stopped, -1, std::vector<std::int64_t>{20}), now);
    for (const auto* agent : {"a", "b"}) m.report(report(agent, 1, NodeState::Running, 25), now);
    // b's trainer failed before it restored; a has not stopped yet when the master dies.
    Report crash = report("b", 1, NodeState::Stopped, 25, std::vector<std::int64_t>{20});
    crash.fault = FaultReport{classify_stop(s, LiveStop::Crash), "exit 1; rank 1 failed first", -1, -1, 0.0, -1, true};
    m.report(crash, now);
    m.tick(now + std::chrono::seconds(1));  // the journal is written
  }
  JobMaster resumed(s, controller, o, now);
  REQUIRE(resumed.resumed());
  resumed.report(report("b", 2, NodeState::Stopped, 25, std::vector<std::int64_t>{20}), now);
  resumed.report(report("a", 2, NodeState::Stopped, 25, std::vector<std::int64_t>{20}), now);
  CHECK(resumed.generation() == 2);
  CHECK(resumed.status(now)["phase"] == "running");
  resumed.close(now);
  const auto faults = fault_rows(o.events_path);
  REQUIRE(faults.size() == 1);  // was none: the resumed master decided without the fault
  CHECK(faults[0].node == 1);
  CHECK(faults[0].detail == "software_bug exit 1; rank 1 failed first");
  // The fault's detail says the trainer failed before restoring: the restart's crash-loop count has it.
  const std::string journal = [&] {
    std::ifstream j(o.journal_path);
    return std::string((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
  }();
  CHECK(journal.find("\"failed_launches\":1") != std::string::npos);
}

TEST_CASE("delivery delay: a report's time in queues, beyond its agent's quickest, whatever the clocks' offset", "[live][cluster][unit]") {
  using std::chrono::milliseconds;
  DeliveryDelay d;
  const auto t0 = Clock::now();
  const std::int64_t offset_us = -5'000'000'000;  // the agent's steady clock, far from the master's
  const auto sent = [&](Clock::time_point left) { return std::chrono::duration_cast<std::chrono::microseconds>(left.time_since_epoch()).count() + offset_us; };
  CHECK(d.excess(sent(t0), t0 + milliseconds(4)) == Clock::duration::zero());  // the first is the quickest so far
  CHECK(d.excess(sent(t0 + milliseconds(100)), t0 + milliseconds(101)) == Clock::duration::zero());
  CHECK(d.excess(sent(t0 + milliseconds(200)), t0 + milliseconds(501)) == milliseconds(300));
  // The quickest is remembered for a window or two, then forgotten (the clocks drift apart).
  CHECK(d.excess(sent(t0 + std::chrono::seconds(70)), t0 + std::chrono::seconds(70) + milliseconds(11)) == milliseconds(10));
  CHECK(d.excess(sent(t0 + std::chrono::seconds(200)), t0 + std::chrono::seconds(200) + milliseconds(11)) == Clock::duration::zero());
  // A stamp from a broken clock (a report "sent" an hour before its agent's others) is not believed past the window.
  CHECK(d.excess(sent(t0 + std::chrono::seconds(201)) - 3'600'000'000, t0 + std::chrono::seconds(201)) == DeliveryDelay::kWindow);
}

TEST_CASE("job master: a report held up in queues does not date its fault later than a peer's that came straight through", "[live][cluster][unit]") {
  using std::chrono::milliseconds;
  const Scenario s = parse_policies_or_scenario(R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "1s"}}})", "p.json");
  const RecoveryController controller(s);
  for (const bool stamped : {true, false}) {
    DYNAMIC_SECTION((stamped ? "the reports say when they left" : "reports without a stamp (an older agent) are dated on arrival")) {
      Folder f;
      MasterOptions o;
      o.nnodes = 2;
      o.events_path = (f.path / "job.csv").string();
      const auto t0 = Clock::now();
      JobMaster m(s, controller, o, t0);
      // Each agent's steady clock is its own; a report normally arrives 1 ms after it left.
      const std::map<std::string, std::int64_t> offset_us = {{"a", 7'000'000}, {"b", -3'000'000'000}};
      const auto left_at = [&](Report r, Clock::time_point left) {
        if (stamped) r.sent_us = std::chrono::duration_cast<std::chrono::microseconds>(left.time_since_epoch()).count() + offset_us.at(r.agent);
        return r;
      };
      m.join({"a", 0, "h0", "", false}, t0);
      m.join({"b", 1, "h1", "", false}, t0);
      for (const auto* agent : {"a", "b"}) m.report(left_at(report(agent, 1, NodeState::Stopped, -1, std::vector<std::int64_t>{}), t0), t0 + milliseconds(1));
      for (const auto* agent : {"a", "b"}) m.report(left_at(report(agent, 1, NodeState::Running, 5), t0 + milliseconds(10)), t0 + milliseconds(11));
      // Node 1's worker aborts at T; node 0's collective fails 30 ms later. Node 0's report leaves at
      // T + 100 ms and comes straight through; node 1's leaves at T + 500 ms and waits 300 ms.
      const auto T = t0 + std::chrono::seconds(10);
      Report peer = left_at(report("a", 1, NodeState::Stopped, 5, std::vector<std::int64_t>{}), T + milliseconds(100));
      peer.fault = FaultReport{classify_stop(s, LiveStop::Crash), "exit 1; rank 0 failed first: Connection closed by peer", -1, -1, 0.070};
      CHECK(m.report(peer, T + milliseconds(101)).what == PlanKind::Stop);
      Report abort = left_at(report("b", 2, NodeState::Stopped, 5, std::vector<std::int64_t>{}), T + milliseconds(500));
      abort.fault = FaultReport{classify_stop(s, LiveStop::Crash), "exit 1; rank 1 failed first: Fatal Python error: Aborted", -1, -1, 0.500};
      abort.fault->generation = 1;
      m.report(abort, T + milliseconds(800));
      m.report(left_at(report("a", 2, NodeState::Stopped, 5, std::vector<std::int64_t>{}), T + milliseconds(900)), T + milliseconds(901));
      CHECK(m.generation() == 2);
      m.close(T + std::chrono::seconds(1));
      const auto faults = fault_rows(o.events_path);
      REQUIRE(faults.size() == 1);
      CHECK(faults[0].node == (stamped ? 1 : 0));  // unstamped, the held-up report's fault looks 270 ms later than it was
    }
  }
}
