// The one event log: rows written from typed events read back as the same events; the ledger rows;
// free text kept to one field; malformed rows named by line. Kernel-log lines and Xid reports.
#include <catch2/catch.hpp>

#include <sstream>

#include "core/event_log.hpp"
#include "core/kernel_log.hpp"
#include "core/ranks.hpp"

using namespace ctwin;

TEST_CASE("every event kind has a name the reader knows, and back", "[core][events]") {
  for (int k = 0; k <= static_cast<int>(EventKind::Ledger); ++k) {
    const auto kind = static_cast<EventKind>(k);
    INFO(to_string(kind));
    REQUIRE(event_kind_named(to_string(kind)) == kind);
  }
  CHECK_FALSE(event_kind_named("crashed"));
}

TEST_CASE("an event log round trip keeps kinds, nodes, codes, classes and notes", "[core][events]") {
  const std::vector<EventClass> classes{{"gpu_faulty", "gpu"}, {"tor", "leaf"}, {"software_bug", nullptr}};
  std::vector<RunEvent> events(4);
  events[0] = {1'500'000, 3, 5, EventKind::Fault, 79, 0, 1.0, -1};
  events[1] = {2'000'000, -1, -1, EventKind::Fault, -1, 1, 1.0, 12};
  events[2] = {3'000'000, 2, -1, EventKind::SlowBegin, -1, -1, 0.25, -1};
  events[3] = {4'000'000, -1, -1, EventKind::Shrunk, -1, -1, 1.0, 6};
  Ledger ledger;
  ledger[Category::Productive] = 3'000'000;
  ledger[Category::Detection] = 1'000'000;
  const std::string text = event_log_csv(classes, events, &ledger, 4'000'000);
  CHECK(text.find("1.500000,node-3,5,fault,79,gpu_faulty\n") != std::string::npos);
  CHECK(text.find("2.000000,,,fault,,tor leaf=12\n") != std::string::npos);
  CHECK(text.find("3.000000,node-2,,slow_begin,,speed=0.25\n") != std::string::npos);
  CHECK(text.find("4.000000,,,shrunk,,replicas=6\n") != std::string::npos);

  std::istringstream in(text);
  const EventLog log = read_event_log(in, "round-trip.csv");
  REQUIRE(log.report.malformed.empty());
  REQUIRE(log.events.size() == 4 + kCategoryCount);
  CHECK(log.events[0].kind == EventKind::Fault);
  CHECK(log.events[0].node == 3);
  CHECK(log.events[0].gpu == 5);
  CHECK(log.events[0].code == 79);
  CHECK(log.events[0].time_s == 1.5);
  CHECK(log.events[4].kind == EventKind::Ledger);
  CHECK(log.events[4].detail == "productive=3.000000");

  // A live row's note follows the class and stays one CSV field.
  RunEvent evicted{5'000'000, 1, -1, EventKind::Evicted, -1, 2, 1.0, -1};
  CHECK(event_log_row(evicted, classes, "drain \"node\",now\n(dry-run)") ==
        "5.000000,node-1,,evicted,,software_bug drain  node  now (dry-run)");
}

TEST_CASE("the event log reader names what it cannot read, by line", "[core][events]") {
  std::istringstream in("time_s,node,gpu,kind,code,detail\n"
                        "1.0,node-0,,running,,\n"
                        "2.0,node-x,,fault,,a\n"
                        "3.0,,,exploded,,\n"
                        "-1,,,end,,\n");
  const EventLog log = read_event_log(in, "bad.csv");
  CHECK(log.report.parsed == 1);
  REQUIRE(log.report.malformed.size() == 3);
  CHECK(log.report.malformed[0].line == 3);
  CHECK(log.report.malformed[1].reason.find("unknown kind \"exploded\"") != std::string::npos);
  CHECK(log.report.malformed[2].line == 5);
}

TEST_CASE("kernel-log lines give their time and host, and Xid reports their bus and code", "[core][kernel-log]") {
  KernelLineClock clock("node-0", 2024);
  const auto dmesg = clock.stamp("[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.");
  REQUIRE(dmesg);
  CHECK(dmesg->time_s == 1234.5);
  CHECK(dmesg->host == "node-0");
  const auto syslog = clock.stamp("Mar 21 13:34:34 node-17 kernel: NVRM: Xid (0000:18:00): 48, DBE");
  REQUIRE(syslog);
  CHECK(syslog->host == "node-17");
  CHECK_FALSE(clock.stamp("no timestamp here"));

  XidReport x;
  std::string why;
  CHECK(parse_xid_line("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, gone", x, why) == XidLine::Xid);
  CHECK(x.pci == "0000:3b:00");
  CHECK(x.xid == 79);
  CHECK(x.message == "pid=1, gone");
  CHECK(parse_xid_line("[ 1.0] usb 1-1: new device", x, why) == XidLine::NotXid);
  CHECK(parse_xid_line("[ 1.0] NVRM: Xid (PCI:0000:3b:00): none, x", x, why) == XidLine::Malformed);
  CHECK(why == "the Xid code is not a number from 1 to 100000");
  // A code past any Xid (a fuzzer's 4555555) is malformed here, not refused later by the scenario it would write.
  CHECK(parse_xid_line("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 4555555, x", x, why) == XidLine::Malformed);
  // dmesg's seconds since boot: past a century of uptime, or not a number, no stamp.
  KernelLineClock uptime("gpu-001", 2024);
  CHECK(uptime.stamp("[91236.5] NVRM: Xid (PCI:0000:3b:00): 79, gone"));
  CHECK_FALSE(uptime.stamp("[9120000000000000000000000000000000000000000000000000000000000036.0] NVRM: Xid (PCI:0000:3b:00): 79, gone"));
  CHECK_FALSE(uptime.stamp("[nan] NVRM: Xid (PCI:0000:3b:00): 79, gone"));
  CHECK_FALSE(uptime.stamp("[-5.0] NVRM: Xid (PCI:0000:3b:00): 79, gone"));
}

TEST_CASE("one process is one rank holding every trial", "[core][ranks]") {
  const Ranks& world = Ranks::world();
  CHECK(world.size() == 1);
  CHECK(world.is_root());
  CHECK(world.slice(17).first == 0);
  CHECK(world.slice(17).count == 17);
  CHECK(world.gather({1.0, 2.0}, 2) == std::vector<double>{1.0, 2.0});
}
