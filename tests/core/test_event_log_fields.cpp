// A row's key=value fields: a start row says whose log it is (a node's host, a job's width).
#include <catch2/catch.hpp>

#include "core/event_log.hpp"

using namespace ctwin;

TEST_CASE("event log: a detail's key=value fields, and the class a row names", "[event_log]") {
  const std::string master = "utc=2026-11-29T03:28:18.027154Z host=vm job=twin-loop-16168 nodes=2";
  CHECK(detail_field(master, "nodes") == "2");
  CHECK(detail_field(master, "job") == "twin-loop-16168");
  CHECK(detail_field(master, "host") == "vm");
  CHECK_FALSE(detail_field("utc=2026-11-29T04:19:04.197813Z host=host-n0", "nodes"));
  CHECK_FALSE(detail_field("hostnodes=3", "nodes"));
  CHECK_FALSE(detail_field("", "nodes"));
  LoggedEvent fault;
  fault.kind = EventKind::Fault;
  fault.detail = "software signal 9 (Killed)";
  CHECK(logged_class(fault) == "software");
  fault.detail = "cable cable=805";
  CHECK(logged_class(fault) == "cable");
  LoggedEvent checkpoint;
  checkpoint.kind = EventKind::CheckpointDone;
  checkpoint.detail = "step=50";
  CHECK(logged_class(checkpoint).empty());
  fault.detail = "speed=0.5";
  CHECK(logged_class(fault).empty());
}
