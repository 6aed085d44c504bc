// The restart rules a job of one node and a job of a thousand share (live/job): which step a
// restart restores, and when the job gives up.

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "live/job/recovery.hpp"
#include "live/job/restore_step.hpp"
#include "live/supervisor/job_launch.hpp"

using namespace ctwin::live;

TEST_CASE("restore step: the newest step every rank holds, no later than a clean bound", "[live][job]") {
  CHECK(clean_restore_step({30, 20, 10}, -1).step == 30);
  CHECK(clean_restore_step({}, -1).step == -1);  // nothing held: from scratch, nothing to say
  CHECK(clean_restore_step({}, -1).warning.empty());
  const RestoreChoice bounded = clean_restore_step({40, 30, 20}, 34);  // silent corruption from step 35
  CHECK(bounded.step == 30);
  CHECK(bounded.warning.empty());
  // Every kept step is past the onset: from scratch, and said, naming the steps kept.
  const RestoreChoice none = clean_restore_step({110, 100}, 94);
  CHECK(none.step == -1);
  CHECK(none.warning.rfind("no checkpoint at or before step 94 is kept (steps 100 to 110", 0) == 0);
}

TEST_CASE("restart budget: the restarts allowed, and three launches in a row that never restored", "[live][job]") {
  RestartBudget budget(2);
  CHECK_FALSE(budget.spent());
  budget.restarted();
  budget.restarted();
  REQUIRE(budget.spent());
  CHECK(*budget.spent() == "gave up after 2 restarts");
  RestartBudget launches(100);
  launches.launch_ended(true);
  launches.launch_ended(true);
  launches.launch_ended(false);  // this one restored: the count starts over
  launches.launch_ended(true);
  launches.launch_ended(true);
  CHECK_FALSE(launches.spent());
  launches.launch_ended(true);
  REQUIRE(launches.spent());
  CHECK(launches.spent()->find("failed 3 times in a row") != std::string::npos);
  RestartBudget resumed(3);
  resumed.resume(3, 0);  // a master's journal
  CHECK(resumed.spent());
  RestartBudget looping(100);
  looping.resume(4, 2);  // two launches had failed before the master restarted
  looping.launch_ended(true);
  CHECK(looping.spent());
}

TEST_CASE("persist folder: a run claims it, and another run's steps are refused unless the master says --resume", "[live][job]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ctwin-claim-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CHECK(claim_persist_folder(dir.string(), "job42/aaa", false).empty());  // a new folder: claimed
  CHECK(claim_persist_folder(dir.string(), "job42/aaa", false).empty());  // the same run (a restarted agent)
  fs::create_directories(dir / "step-000000000077");
  const std::string refused = claim_persist_folder(dir.string(), "job42/bbb", false);  // the README example run again
  CHECK(refused.find("holds the steps of run job42/aaa, not of this one (job42/bbb)") != std::string::npos);
  CHECK(refused.find("--resume") != std::string::npos);
  CHECK(claim_persist_folder(dir.string(), "job42/bbb", true).empty());  // told to take them
  CHECK(claim_persist_folder(dir.string(), "job42/bbb", false).empty());  // now this run's
  fs::remove(dir / "ctwin-run");  // steps nobody claims (an older ctwin, or copied in)
  CHECK(claim_persist_folder(dir.string(), "job42/ccc", false).find("a run that did not claim it") != std::string::npos);
  fs::remove_all(dir);
}
