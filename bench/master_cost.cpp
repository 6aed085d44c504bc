// ctwin_bench_master_cost: the job master's own cost per report, without the network: parsing a
// report, JobMaster::report with 1,000 nodes, and the plan's JSON (bench/master_load.sh measures
// the whole, HTTP included). `./build/ctwin_bench_master_cost [POLICY]`
#include <chrono>
#include <iostream>
#include <cstdio>
#include "live/cluster/heartbeat_datagram.hpp"
#include "live/cluster/protocol.hpp"
#include "live/job/job_master.hpp"
#include "models/scenario_loader.hpp"
#include "policies/recovery_controller.hpp"
using namespace ctwin;
using namespace ctwin::live;
int main(int argc, char** argv) {
  std::cerr.rdbuf(nullptr);  // the master says every join
  const Scenario s = load_policies_or_scenario(argc > 1 ? argv[1] : "scenarios/policies/live.json");
  const RecoveryController c(s);
  MasterOptions o; o.nnodes = 1000;
  auto now = std::chrono::steady_clock::now();
  JobMaster m(s, c, o, now);
  for (int a = 0; a < 1000; ++a) m.join({std::string("a").append(std::to_string(a)), a, "h", "127.0.0.1", false}, now);
  for (int a = 0; a < 1000; ++a) { Report r; r.agent = std::string("a").append(std::to_string(a)); r.status = {1, NodeState::Stopped, -1, std::vector<std::int64_t>{}}; m.report(r, now); }
  std::vector<std::string> bodies;
  for (int a = 0; a < 1000; ++a) { Report r; r.agent = std::string("a").append(std::to_string(a)); r.status = {1, NodeState::Running, 5, std::nullopt}; bodies.push_back(cluster::to_json(r).dump()); }
  const int n = 100000;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) { auto r = cluster::parse_report(bodies[i % 1000]); }
  auto t1 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) { Report r; r.agent = std::string("a").append(std::to_string(i % 1000)); r.status = {1, NodeState::Running, 5, std::nullopt}; auto p = m.report(r, now); }
  auto t2 = std::chrono::steady_clock::now();
  Report r; r.agent = "a1"; r.status = {1, NodeState::Running, 5, std::nullopt}; auto p = m.report(r, now);
  for (int i = 0; i < n; ++i) { auto d = cluster::to_json(p).dump(); }
  auto t3 = std::chrono::steady_clock::now();
  const std::string token = "a-job-token-of-32-characters-xyz";
  const std::string datagram = cluster::encode(Heartbeat{"a1", 1, 1, NodeState::Running, 5, 1, PlanKind::Run, 0}, token);
  std::size_t accepted = 0;
  for (int i = 0; i < n; ++i) accepted += cluster::decode_heartbeat(datagram, token).has_value();  // verify the HMAC, parse
  auto t4 = std::chrono::steady_clock::now();
  auto us = [&](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count() / n; };
  std::printf("per report, 1,000 nodes: parse %.2f us, JobMaster::report %.2f us, the plan as JSON %.2f us; a heartbeat datagram "
              "verified (HMAC-SHA256) and parsed %.2f us (%zu accepted)\n", us(t0, t1), us(t1, t2), us(t2, t3), us(t3, t4), accepted);
}
