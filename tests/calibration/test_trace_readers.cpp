// Each trace reader on fixtures in the formats fleets really write (tests/traces/README.md):
// kernel logs (dmesg, syslog, ISO and JSON journals), sacct, incident tables, step logs; bad lines
// reported by number, never fatal.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <set>
#include <string>

#include <boost/random/mersenne_twister.hpp>
#include <boost/random/lognormal_distribution.hpp>

#include "calibration/calibrate.hpp"
#include "calibration/readers/incident_table.hpp"
#include "calibration/readers/slurm_sacct.hpp"
#include "calibration/readers/step_log.hpp"
#include "calibration/readers/xid_log.hpp"
#include "calibration/step_times.hpp"
#include "core/event_log.hpp"
#include "support/fixtures.hpp"

using namespace ctwin;
using namespace ctwin::calib;

namespace {

template <class Reader>
auto read(const std::string& name, Reader reader) {
  std::ifstream in(test::trace_file(name));
  REQUIRE(in);
  return reader(in, name);
}

}  // namespace

TEST_CASE("kernel logs: Xid lines from dmesg, syslog and ISO journals, bad ones reported by line", "[calibration][readers]") {
  const XidLog dmesg = read("gpu-017.dmesg", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, "gpu-017"); });
  REQUIRE(dmesg.events.size() == 4);
  CHECK(dmesg.events[0].xid == 48);
  CHECK(dmesg.events[0].host == "gpu-017");
  CHECK(dmesg.events[0].pci == "0000:3b:00");
  CHECK(dmesg.events[0].time_s == Approx(8123.456789));
  CHECK(dmesg.events[3].xid == 79);
  CHECK(dmesg.events[3].pci == "0000:86:00");  // the old form, without "PCI:"
  CHECK(dmesg.events[3].message.find("fallen off the bus") != std::string::npos);
  REQUIRE(dmesg.report.malformed.size() == 1);
  CHECK(dmesg.report.malformed[0].line == 8);
  CHECK(dmesg.report.skipped == 4);
  CHECK(dmesg.window.at("gpu-017").second == Approx(172800));

  const XidLog journal = read("fleet.journal", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, "", 2023); });
  REQUIRE(journal.events.size() == 3);
  CHECK(journal.events[0].host == "gpu-001");
  CHECK(journal.events[1].xid == 79);
  // Dec 30 23:59:58 2023, then Jan 1 03:12:45 2024: the year turned.
  CHECK(journal.events[1].time_s - journal.events[0].time_s == Approx(86400 + 3 * 3600 + 12 * 60 + 47));
  CHECK(journal.events[2].host == "gpu-002");
  REQUIRE(journal.report.malformed.size() == 1);
  CHECK(journal.report.malformed[0].line == 5);

  const XidLog iso = read("fleet-iso.journal", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, ""); });
  REQUIRE(iso.events.size() == 2);
  CHECK(iso.events[0].time_s == Approx(epoch_seconds(2024, 3, 21, 12, 34, 34)));  // +0100
  CHECK(iso.events[1].host == "gpu-102");
  CHECK(iso.events[1].xid == 94);

  // journalctl -k -o json: the stamp and host are fields; MESSAGE may come as its bytes.
  const XidLog json = read("fleet-json.journal", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, ""); });
  REQUIRE(json.events.size() == 2);
  CHECK(json.events[0].host == "gpu-101");
  CHECK(json.events[0].xid == 79);
  CHECK(json.events[0].pci == "0000:3b:00");
  CHECK(json.events[0].time_s == Approx(epoch_seconds(2024, 3, 21, 12, 34, 34) + 0.123456));
  CHECK(json.events[1].host == "gpu-102");
  CHECK(json.events[1].xid == 48);  // from MESSAGE's bytes
  REQUIRE(json.report.malformed.size() == 3);
  CHECK(json.report.malformed[0].line == 5);  // "Xid (...): fatal": no code
  CHECK(json.report.malformed[1].line == 6);
  CHECK(json.report.malformed[1].reason.find("not one") != std::string::npos);
  CHECK(json.report.malformed[2].reason == "a journal entry without MESSAGE");
  CHECK(json.report.skipped == 3);  // two other kernel messages, and a user's `logger` line claiming an Xid
  CHECK(json.window.at("gpu-102").second - json.window.at("gpu-102").first == Approx(86400 - 7200));

  const XidLog forms = read("public-forms.syslog", [](std::istream& in, const std::string& f) { return read_xid_log(in, f, "", 2018); });
  REQUIRE(forms.events.size() == 3);
  CHECK(forms.events[0].host == "localhost");
  CHECK(forms.events[0].xid == 31);
  CHECK(forms.events[1].pci == "0000:01:00");
  CHECK(forms.events[1].xid == 13);
}

TEST_CASE("sacct --parsable2: allocations only, states, node lists, bad lines reported", "[calibration][readers]") {
  const SlurmLog log = read("jobs.sacct", read_sacct);
  REQUIRE(log.jobs.size() == 5);
  CHECK(log.report.skipped == 3);  // two steps, one running job
  REQUIRE(log.report.malformed.size() == 1);
  CHECK(log.report.malformed[0].line == 10);
  CHECK(log.jobs[0].state == "NODE_FAIL");
  CHECK(log.jobs[0].failed());
  CHECK(log.jobs[0].nodes == 64);
  CHECK(log.jobs[0].node_list.size() == 64);
  CHECK(log.jobs[0].node_list.front() == "gpu-001");
  CHECK(log.jobs[1].node_list.size() == 64);  // 001-040 and 042-065
  CHECK(log.jobs[1].node_list[40] == "gpu-042");
  CHECK(log.jobs[4].state == "CANCELLED");
  CHECK_FALSE(log.jobs[4].failed());
  CHECK(log.jobs[0].end_s - log.jobs[0].start_s == Approx(16 * 3600 + 13 * 60 + 41));
  CHECK(expand_hostlist("a[1-3],b,c[08-10]") == std::vector<std::string>{"a1", "a2", "a3", "b", "c08", "c09", "c10"});
  CHECK(expand_hostlist("a[3-1]").empty());
}

TEST_CASE("incident tables and event logs: rows with exposure, malformed lines by number", "[calibration][readers]") {
  const IncidentTable table = read("incidents.csv", read_incident_table);
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0].exposure_hours == Approx(150000 * 24));
  CHECK(table.rows[0].component == "gpu");
  CHECK(table.rows[1].effect == "hang");
  REQUIRE(table.report.malformed.size() == 1);
  CHECK(table.report.malformed[0].line == 5);
  CHECK(table.report.malformed[0].reason.find("node-fortnights") != std::string::npos);

  std::istringstream log("time_s,node,gpu,kind,code,detail\n0.000000,,,running,,\n12.5,node-3,2,fault,79,gpu_faulty\n"
                         "13,node-x,,node_down,,\n14,node-3,,to_repair,,\n");
  const EventLog events = read_event_log(log, "inline.csv");
  REQUIRE(events.events.size() == 3);
  CHECK(events.events[1].node == 3);
  CHECK(events.events[1].gpu == 2);
  CHECK(events.events[1].code == 79);
  REQUIRE(events.report.malformed.size() == 1);
  CHECK(events.report.malformed[0].line == 4);

  std::istringstream garbage("this is not\na trace of any kind\n");
  const EventLog none = read_event_log(garbage, "garbage.csv");
  CHECK_THROWS_AS(none.report.require_some(), TraceUnreadable);
}

TEST_CASE("step logs: Megatron-LM iteration lines and per-node timings, slow nodes by the straggler policy's robust z", "[calibration][readers]") {
  const StepLog megatron = read("megatron_train.log", read_megatron_log);
  REQUIRE(megatron.records.size() == 5);
  CHECK(megatron.records[0].step == 10);
  CHECK(megatron.records[0].duration_s == Approx(11.4026));
  CHECK(megatron.records[2].duration_s == Approx(11.1984));  // "current/mean": the current one
  CHECK(megatron.report.skipped == 5);
  REQUIRE(megatron.report.malformed.size() == 1);
  CHECK(megatron.report.malformed[0].line == 8);  // "elapsed time per iteration (ms): nan"

  // 64 nodes, 300 steps each, 1% lognormal noise; nodes 7, 21 and 50 run at 90% speed.
  boost::random::mt19937 rng(17);
  boost::random::lognormal_distribution<double> noise(0.0, 0.01);
  std::ostringstream csv;
  csv << "step,node,duration_s\n";
  for (int step = 0; step < 300; ++step)
    for (int node = 0; node < 64; ++node)
      csv << step << ",node-" << node << "," << 10.0 * noise(rng) / (node == 7 || node == 21 || node == 50 ? 0.9 : 1.0) << "\n";
  csv << "300,node-3,-1\n";
  std::istringstream in(csv.str());
  const StepLog log = read_step_csv(in, "steps.csv");
  CHECK(log.records.size() == 300 * 64);
  REQUIRE(log.report.malformed.size() == 1);
  CHECK(log.report.malformed[0].line == 300 * 64 + 2);
  const StepTimeFit fit = fit_step_times(log.records);
  CHECK(fit.nodes == 64);
  CHECK(fit.median_s == Approx(10).epsilon(0.002));
  REQUIRE(fit.slow_nodes.size() == 3);
  std::set<std::string> slow;
  for (const SlowNode& n : fit.slow_nodes) {
    slow.insert(n.node);
    CHECK(n.speed_factor == Approx(0.9).epsilon(0.01));
  }
  CHECK(slow == std::set<std::string>{"node-7", "node-21", "node-50"});
  CHECK(fit.slow_node_share.estimate == Approx(3.0 / 64));
  CHECK(fit.slow_node_share.lower < 3.0 / 64);
  CHECK(fit.slow_node_share.upper > 3.0 / 64);
  // The slow nodes' steps are 1.11x the median: with 1% noise about 84% of them clear 1.1x, and
  // healthy steps (10 sigma away) never do.
  CHECK(fit.slow_step_share.estimate == Approx(0.84 * 3 / 64).epsilon(0.05));
  // Clopper-Pearson against a known value: 0 of 10 at 95% has upper bound 1 - 0.025^(1/10).
  CHECK(binomial_share(0, 10).upper == Approx(1 - std::pow(0.025, 0.1)));
}

TEST_CASE("step logs: a node is compared with its pipeline stage, so a long last stage is not a set of slow nodes", "[calibration][readers]") {
  // 4 stages of 8 nodes; the last stage's section takes 1.3x (it holds the output layer); node-5
  // (stage 0) runs at half speed.
  boost::random::mt19937 rng(5);
  boost::random::lognormal_distribution<double> noise(0.0, 0.01);
  std::ostringstream with_stage, without;
  with_stage << "step,node,stage,duration_s\n";
  without << "step,node,duration_s\n";
  for (int step = 0; step < 100; ++step)
    for (int node = 0; node < 32; ++node) {
      const int stage = node / 8;
      const double t = 10.0 * noise(rng) * (stage == 3 ? 1.3 : 1.0) * (node == 5 ? 2.0 : 1.0);
      with_stage << step << ",node-" << node << "," << stage << "," << t << "\n";
      without << step << ",node-" << node << "," << t << "\n";
    }
  std::istringstream staged_in(with_stage.str()), flat_in(without.str());
  const StepTimeFit staged = fit_step_times(read_step_csv(staged_in, "staged.csv").records);
  CHECK(staged.peer_groups == 4);
  REQUIRE(staged.slow_nodes.size() == 1);
  CHECK(staged.slow_nodes[0].node == "node-5");
  CHECK(staged.slow_nodes[0].speed_factor == Approx(0.5).epsilon(0.02));  // against its stage
  // Without the stage, every node is compared with every node: the last stage reads as slow.
  const StepTimeFit flat = fit_step_times(read_step_csv(flat_in, "flat.csv").records);
  CHECK(flat.peer_groups == 0);
  CHECK(flat.slow_nodes.size() == 9);
}
