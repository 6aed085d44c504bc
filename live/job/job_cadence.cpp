// The checkpoint interval, live: the scenario's checkpoint policy (policies/checkpoint_policy, the
// object the simulator's trial asks) given what this job has measured (node rank 0's save stalls
// and step time, the interruptions so far), turned into a cadence in steps that every trainer
// follows from a step ahead of the job, counted from the last save or restore as the simulator's is.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "live/job/job_master.hpp"

namespace ctwin::live {

void JobMaster::update_cadence(Clock::time_point now) {
  if (!o_.set_cadence || phase_ != Phase::Running || now - cadence_checked_ < std::chrono::seconds(1)) return;
  cadence_checked_ = now;
  const double step_s = book_.step_s(), save_s = book_.save_s();
  if (step_s <= 0 || save_s < 0) return;  // not measured yet: the trainers keep their own cadence
  long failures = 0;
  for (const auto& [fault_class, n] : interruptions_) failures += n;
  IntervalContext context;
  context.now_us = ledger_.at(now);
  context.failures_seen = failures;
  context.save_us = seconds_to_micros(save_s);
  const double interval_s = micros_to_seconds(interval_policy_->interval_us(context));
  // A change applies far enough ahead that every node has heard of it: a few report intervals.
  const std::int64_t lead = steps_per_interval(3 * o_.report_interval_s + 1, step_s) + 1;
  // An interruption since the last change is news, not noise: the policy's answer is announced at once.
  const double hysteresis = failures != cadence_failures_ ? -1.0 : 0.1;
  const auto change = next_cadence(cadence_, steps_per_interval(interval_s, step_s), book_.step(), lead, hysteresis, book_.interval_from());
  if (!change) return;
  cadence_.add(*change);
  cadence_failures_ = failures;
  char note[240];
  std::snprintf(note, sizeof note,
                "checkpoint cadence every=%lld from_step=%lld interval_s=%.3f save_s=%.4f step_s=%.4f interruptions=%ld mtbf_s=%.3f at_s=%.3f",
                static_cast<long long>(change->every), static_cast<long long>(change->from), interval_s, save_s, step_s, failures,
                interval_policy_->planned_mtbf_s(context), micros_to_seconds(context.now_us));
  record(ledger_.marked(), EventKind::Health, note);  // at the last charge: a line said before now may still come
  std::cerr << "ctwin master: " << note << "\n";
}

}  // namespace ctwin::live
