// Text from outside (traces, kernel logs, scenario numbers) that once crashed or fooled a reader:
// a short time zone, invalid UTF-8, NaN and Inf, a repeated column, an Xid faked by a user's
// syslog message, and float-to-integer conversions out of range (issue 17).
#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>

#include "core/command_line.hpp"
#include "core/event_log.hpp"
#include "core/kernel_log.hpp"
#include "core/text_records.hpp"
#include "core/units.hpp"

using namespace ctwin;

TEST_CASE("a time with a short zone is not a time, and no reader runs past the line", "[core][hostile]") {
  double t = 0;
  std::size_t used = 0;
  CHECK_FALSE(parse_iso_time("2024-03-21T13:34:34+01:0", t, &used));
  CHECK_FALSE(parse_iso_time("2024-03-21T13:34:34+0", t, &used));
  CHECK_FALSE(parse_iso_time("2024-03-21T13:34:34+", t, &used));
  REQUIRE(parse_iso_time("2024-03-21T13:34:34+01:00", t, &used));
  CHECK(used == 25);
  REQUIRE(parse_iso_time("2024-03-21T13:34:34+0100 host", t, &used));
  CHECK(used == 24);
  KernelLineClock clock("", 2024);
  CHECK_FALSE(clock.stamp("2024-03-21T13:34:34+01:0 host kernel: NVRM: Xid (PCI:0000:3b:00): 79, x"));
  const auto ok = clock.stamp("2024-03-21T13:34:34+01:00 host kernel: NVRM: Xid (PCI:0000:3b:00): 79, x");
  REQUIRE(ok);
  CHECK(ok->host == "host");
}

TEST_CASE("kernel-log stamps out of range and bus ids that are no PCI address are malformed, never a fault", "[core][hostile]") {
  KernelLineClock clock("", 2024);
  for (const char* line : {"[Thu Mar 99 99:99:99 99999] NVRM: Xid (PCI:0000:3b:00): 79, x", "[Thu Mar 21 13:34:34 1900] NVRM: Xid (PCI:0000:3b:00): 79, x",
                           "[Thu Feb 30 13:34:34 2024] NVRM: Xid (PCI:0000:3b:00): 79, x", "[Thu Mar 21 24:00:00 2024] NVRM: Xid (PCI:0000:3b:00): 79, x",
                           "Mar 32 13:34:34 gpu-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", "Mar 21 13:61:34 gpu-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, x"}) {
    INFO(line);
    CHECK_FALSE(clock.stamp(line));
  }
  CHECK(clock.stamp("[Thu Feb 29 23:59:60 2024] NVRM: Xid (PCI:0000:3b:00): 79, x"));  // a leap day and a leap second
  XidReport x;
  std::string why;
  CHECK(parse_xid_line("[ 12.5] NVRM: Xid (PCI:zz): 79, gone", x, why) == XidLine::Malformed);
  CHECK(why.find("bus id") != std::string::npos);
  CHECK(parse_xid_line("[ 12.5] NVRM: Xid (3b:00.0): 79, gone", x, why) == XidLine::Xid);
}

TEST_CASE("an Xid is the kernel's only: another program's syslog message is not one", "[core][hostile]") {
  XidReport x;
  std::string why;
  for (const char* kernel : {"[ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, gone",
                             "[Thu Mar 21 13:34:34 2024] NVRM: Xid (PCI:0000:3b:00): 79, gone",
                             "Mar 21 13:34:34 gpu-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, gone",
                             "Mar 21 13:34:34 gpu-7 kernel: [ 12.5] NVRM: Xid (PCI:0000:3b:00): 79, gone",
                             "2024-03-21T13:34:34+0100 gpu-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, gone"}) {
    INFO(kernel);
    CHECK(parse_xid_line(kernel, x, why) == XidLine::Xid);
  }
  // `logger "NVRM: Xid (PCI:0000:3b:00): 79, gone"` as root, and text quoting an Xid.
  for (const char* fake : {"Mar 21 13:34:34 gpu-7 root: NVRM: Xid (PCI:0000:3b:00): 79, gone",
                           "Mar 21 13:34:34 gpu-7 root: kernel: NVRM: Xid (PCI:0000:3b:00): 79, gone",
                           "2024-03-21T13:34:34+0100 gpu-7 alice[311]: NVRM: Xid (PCI:0000:3b:00): 79, gone",
                           "[ 12.5] python: saw NVRM: Xid (PCI:0000:3b:00): 79, gone"}) {
    INFO(fake);
    CHECK(parse_xid_line(fake, x, why) == XidLine::NotXid);
  }
}

TEST_CASE("UTF-8, finite numbers and headers are checked before they reach a report", "[core][hostile]") {
  CHECK(valid_utf8("plain, and caf\xc3\xa9 and \xe2\x82\xac and \xf0\x9f\x98\x80"));
  CHECK_FALSE(valid_utf8("xid\xff"));
  CHECK_FALSE(valid_utf8("\xc3"));              // cut short
  CHECK_FALSE(valid_utf8("\xc0\xaf"));          // overlong
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
  CHECK_FALSE(valid_utf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
  double v = 0;
  CHECK(finite_number("2.5", v));
  CHECK(v == 2.5);
  for (const char* bad : {"nan", "NaN", "inf", "-inf", "1e400", "", "2.5x", " "}) {
    INFO(bad);
    CHECK_FALSE(finite_number(bad, v));
  }
  CHECK(header_problem({"time_s", "node", "detail"}).empty());
  CHECK(header_problem({"time_s", "node", "time_s"}).find("\"time_s\" twice") != std::string::npos);
  // Read as bad lines, never as data.
  std::istringstream in("class,count\nxid\xff,3\nok,2\n");
  ReadReport report;
  int rows = 0;
  read_lines(in, report, [](int, const std::string&) { return true; }, [&](int, const std::string&) { ++rows; });
  CHECK(rows == 1);
  REQUIRE(report.malformed.size() == 1);
  CHECK(report.malformed[0].line == 2);
}

TEST_CASE("an event log whose header repeats a column is refused, not read out of bounds", "[core][hostile]") {
  std::istringstream in("time_s,node,gpu,kind,code,detail,detail\n1,node-1,0,interrupted,0,x\n");
  const EventLog log = read_event_log(in, "repeat.csv");
  CHECK(log.events.empty());
  REQUIRE_FALSE(log.report.malformed.empty());
  CHECK(log.report.malformed[0].reason.find("the header must be") != std::string::npos);
  std::istringstream twice("time_s,node,gpu,kind,time_s,detail\n1,node-1,0,interrupted,0,x\n");
  CHECK(read_event_log(twice, "twice.csv").events.empty());
}

TEST_CASE("seconds to microseconds saturates instead of overflowing", "[core][hostile]") {
  CHECK(seconds_to_micros(1.5) == 1'500'000);
  CHECK(seconds_to_micros(-1.5) == -1'500'000);
  CHECK(seconds_to_micros(1e20) == kNever);
  CHECK(seconds_to_micros(-1e20) == -kNever);
  CHECK(seconds_to_micros(std::numeric_limits<double>::infinity()) == kNever);
  CHECK(seconds_to_micros(std::nan("")) == kNever);
  CHECK(round_micros(2.4) == 2);
}

TEST_CASE("HOST:PORT: an explicit host, IPv6 in brackets, every interface warned of", "[core][hostile]") {
  std::string host;
  int port = 0;
  REQUIRE(cli::parse_host_port("[::1]:9401", "--metrics", host, port));
  CHECK((host == "::1" && port == 9401));
  CHECK(cli::host_port_text(host, port) == "[::1]:9401");
  CHECK(cli::host_port_text("10.0.0.1", 29400) == "10.0.0.1:29400");
  CHECK_FALSE(cli::parse_host_port("::1:9401", "--metrics", host, port));  // which colon is the port's?
  CHECK_FALSE(cli::parse_host_port("[::1:9401", "--metrics", host, port));
  CHECK_FALSE(cli::parse_host_port(":9401", "--metrics", host, port));
  std::ostringstream said;
  auto* before = std::cerr.rdbuf(said.rdbuf());
  const bool every = cli::parse_host_port("0.0.0.0:9401", "--metrics", host, port);
  std::cerr.rdbuf(before);
  CHECK(every);
  CHECK(said.str().find("listens on every interface") != std::string::npos);
}
