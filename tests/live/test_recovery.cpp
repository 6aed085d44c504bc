// The restart rules a job of one node and a job of a thousand share (live/job): which step a
// restart restores, and when the job gives up.

#include <catch2/catch.hpp>

#include "live/job/recovery.hpp"
#include "live/job/restore_step.hpp"

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
  resumed.resume(3);  // a master's journal
  CHECK(resumed.spent());
}
