// `ctwin-live precheck` on the CPU backend, with real processes and real timings: a slow rank and
// a hung rank among eight, corrupt GEMM results and busy memory among four, healthy pairs, the
// exit codes (1 problems, 2 bad input, 3 cannot run here). The burn-in (GEMMs of 384) outweighs
// the 1 MiB all-reduce, so a 5x slow rank is slow by the round times too, not only by its own check.

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/fixtures.hpp"

using ctwin::test::read_json;
using ctwin::test::run_ctwin;
using ctwin::test::run_ctwin_live;

namespace {

struct Precheck {
  int code;
  std::string output;
  nlohmann::json report;
};

//! Runs the precheck under a hard limit (`timeout -s KILL`: exit 137), so that a hang fails the test.
//! The round deadline tells a hung rank from a slow one, so it stands far above what a slow rank
//! takes on a loaded machine: a 5x slow rank's group took 1.4-1.8 s beside two busy loops on 2 cores
//! (a healthy one 0.3 s), and with a 2 s deadline it failed both rounds and read as faulty. Only a
//! hung rank waits the deadline out.
Precheck precheck(const std::string& args, const std::string& sizes = "--allreduce-bytes 1MiB --gemm-n 384 --timeout 6s") {
  const std::string json = std::filesystem::temp_directory_path() / ("ctwin-precheck-" + std::to_string(::getpid()) + ".json");
  std::remove(json.c_str());
  auto [code, output] = ctwin::test::run_program("timeout -s KILL 300 " CTWIN_LIVE_BINARY,
                                                 "precheck --backend cpu " + sizes + " --min-of-best 0.5 --json " + json + " " + args);
  Precheck p{code, output, {}};
  if (std::filesystem::exists(json)) p.report = read_json(json);
  std::remove(json.c_str());
  return p;
}

std::string verdict(const Precheck& p, int rank) { return p.report.at("ranks").at(rank).at("verdict"); }
bool evicted(const Precheck& p, int rank) { return p.report.at("ranks").at(rank).at("evict"); }

}  // namespace

TEST_CASE("live precheck: among 8 processes the two rounds find the hung rank and the slow one", "[live][precheck][timing][process]") {
  // 8x slow: its group's round stays 5-7x a healthy one's beside two busy loops, so the confirmation
  // round (cleared at 2x) cannot pass it by noise; at 5x it ran 3-4.5x, and once (CI, a reference
  // group slowed) within 2x, and was cleared.
  const auto p = precheck("--ranks 8 --inject 3:slow=8 --inject 5:hang");
  INFO(p.output);
  CHECK(p.code == 1);
  REQUIRE(p.report.is_object());
  CHECK(p.report["schema_version"] == 1);
  CHECK(p.report["policy"]["faulty"] == nlohmann::json::array({5}));
  CHECK(p.report["policy"]["stragglers_median"] == nlohmann::json::array({3}));
  CHECK(verdict(p, 5) == "faulty");
  CHECK(verdict(p, 3) == "straggler");
  CHECK(evicted(p, 5));
  CHECK(evicted(p, 3));  // the scenario's default: evict stragglers found by the precheck
  // The report's policy is the verdict the actions came from (confirmation rounds included).
  for (const auto& named : p.report["policy"]["stragglers_median"]) CHECK(evicted(p, named.get<int>()));
  for (const int healthy : {0, 1, 2, 4, 6, 7}) {
    // The decision holds however busy the machine: no healthy rank is evicted. Its own GEMM
    // figure may still read low when 8 ranks share 2 cores with other work (measured three more
    // times first; seen at 47% of the best under ctest -j4 beside a build): that is the only
    // finding a healthy rank may carry, and the controller does not act on it.
    CHECK_FALSE(evicted(p, healthy));
    if (verdict(p, healthy) != "ok")
      for (const auto& why : p.report["ranks"][healthy]["reasons"])
        CHECK(why.get<std::string>().rfind("GEMM at ", 0) == 0);
  }
  // Round 1 pairs the fastest with the slowest (DLRover): the hung rank's round-0 partner passes.
  const auto& round1 = p.report["rounds"][1]["groups"];
  bool partner_cleared = false;
  for (const auto& g : round1)
    if (g.size() == 2 && (g[0] == 4 || g[1] == 4)) partner_cleared = g[0] != 5 && g[1] != 5;
  CHECK(partner_cleared);
  CHECK(p.report["rounds"][0]["bus_bytes_per_s"][0].get<double>() > 0);
}

TEST_CASE("live precheck: corrupt GEMM results and memory in use fail a rank on its own checks", "[live][precheck][timing][process]") {
  const auto p = precheck("--ranks 4 --inject 2:corrupt --inject 1:memory=0.5");
  INFO(p.output);
  CHECK(p.code == 1);
  REQUIRE(p.report.is_object());
  CHECK(verdict(p, 1) == "faulty");
  CHECK(verdict(p, 2) == "faulty");
  CHECK(p.report["ranks"][2]["gemm_non_finite"] == 1);
  CHECK(p.report["ranks"][2]["reasons"][0].get<std::string>().find("silent data corruption") != std::string::npos);
  CHECK(p.report["ranks"][1]["reasons"][0].get<std::string>().find("50% of device memory already in use") != std::string::npos);
  CHECK(verdict(p, 0) == "ok");
  CHECK(verdict(p, 3) == "ok");
  CHECK(p.report["policy"]["faulty"] == nlohmann::json::array({1, 2}));
}

TEST_CASE("live precheck: healthy ranks pass with exit 0 and a table", "[live][precheck][timing][process]") {
  const auto p = precheck("--ranks 2");
  INFO(p.output);
  CHECK(p.code == 0);
  CHECK(p.output.find("all ranks pass") != std::string::npos);
  CHECK(p.report["ranks"][0]["gemm_flops_per_s"].get<double>() > 0);
  CHECK(p.report["ranks"][1]["h2d_bytes_per_s"].get<double>() > 0);
}

TEST_CASE("live precheck: bad input is exit 2, and no usable GPU is exit 3 with the reason", "[live][precheck][process]") {
  CHECK(run_ctwin_live("precheck --backend cpu --ranks 4 --inject 9:slow=2").first == 2);
  CHECK(run_ctwin_live("precheck --backend cpu --inject 0:wobbly").first == 2);
  CHECK(run_ctwin_live("precheck --inject 0:hang").first == 2);  // injection is for the CPU backend
  CHECK(run_ctwin_live("precheck --backend cpu --timeout soon").first == 2);
  const auto [bad_policy, bad_text] = run_ctwin_live("precheck --backend cpu --policy " + ctwin::test::fixture("does-not-exist.json"));
  CHECK(bad_policy == 2);
  const auto [code, text] = run_ctwin_live("precheck");
  INFO(text);
  if (!std::filesystem::exists("/proc/driver/nvidia/gpus") || std::filesystem::is_empty("/proc/driver/nvidia/gpus")) {
    CHECK(code == 3);
    CHECK(text.find("cannot run here") != std::string::npos);
  } else {
    WARN("a GPU is present: the exit-3 path is not exercised here");
    CHECK((code == 0 || code == 1));
  }
}

TEST_CASE("live precheck: a hung rank with a 64 MiB all-reduce ends at the deadline, not never", "[live][precheck][process]") {
  // Rank 3 sends 64 MiB to the hung rank 2, whose socket buffers fill: a blocking send() waited for ever.
  const auto t0 = std::chrono::steady_clock::now();
  const auto p = precheck("--ranks 4 --inject 1:slow=8 --inject 2:hang", "--allreduce-bytes 64MiB --gemm-n 128 --timeout 3s");
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(p.output);
  REQUIRE(p.code != 137);  // killed by the test's limit: the precheck hung
  CHECK(p.code == 1);
  REQUIRE(p.report.is_object());
  CHECK(verdict(p, 2) == "faulty");
  CHECK(evicted(p, 2));
  CHECK(took_s < 250);
}

TEST_CASE("live precheck: findings the policy does not act on are printed, with exit 0", "[live][precheck][process]") {
  const std::string policy = std::filesystem::temp_directory_path() / ("ctwin-precheck-policy-" + std::to_string(::getpid()) + ".json");
  std::ofstream(policy) << R"({"schema_version": 1, "policies": {"checkpoint": {"type": "fixed", "interval": "10min"}, "precheck": {"duration": "1s", "evict_stragglers": false}}})";
  const auto p = precheck("--ranks 3 --inject 2:slow=6 --policy " + policy);
  std::remove(policy.c_str());
  INFO(p.output);
  REQUIRE(p.report.is_object());
  CHECK(verdict(p, 2) == "straggler");  // its GEMM is a sixth of the others'
  CHECK_FALSE(evicted(p, 2));
  CHECK(p.report["evicted"].empty());
  CHECK(p.code == 0);
  CHECK(p.output.find("evicts nobody") != std::string::npos);
  CHECK(p.output.find("problems found") == std::string::npos);
}

TEST_CASE("live precheck: one rank has no all-reduce to fail, and more ranks than cores is said", "[live][precheck][process]") {
  const auto one = precheck("--ranks 1");
  INFO(one.output);
  CHECK(one.code == 0);
  REQUIRE(one.report.is_object());
  CHECK(one.output.find("one rank, no all-reduce") != std::string::npos);
  CHECK(one.output.find("failed") == std::string::npos);
  CHECK(one.report["rounds"][0]["allreduce_s"][0].get<double>() == 0);
  CHECK(one.output.find("cores") == std::string::npos);

  const int crowd = static_cast<int>(std::thread::hardware_concurrency()) + 1;
  const auto many = precheck("--ranks " + std::to_string(crowd), "--allreduce-bytes 1MiB --gemm-n 64 --timeout 5s");
  INFO(many.output);
  CHECK(many.output.find("warning: " + std::to_string(crowd) + " ranks on " +
                         std::to_string(std::thread::hardware_concurrency()) + " cores") != std::string::npos);
}
