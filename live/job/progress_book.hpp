#pragma once
//! A trainer's progress messages (restored, step, checkpoint, nan, stopped, done) turned into the
//! ledger's charges and the event log's rows: the job master's one book for the whole job, fed by
//! node rank 0's messages (no agent keeps one).
//!   restored: the stretch since the last mark is restore (its seconds) then restart; productive
//!             time of steps the restore rolled back becomes lost progress;
//!   step:     productive, or degraded beyond the baseline while steps run slow;
//!   checkpoint, stopped, done: checkpoint save; nan: lost progress.

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/event.hpp"
#include "live/job/heartbeat.hpp"
#include "live/job/live_ledger.hpp"
#include "live/job/step_time_watch.hpp"

namespace ctwin::live {

class ProgressBook {
 public:
  //! A row of the event log: when, what, a note, the speed (SlowBegin).
  using Record = std::function<void(Micros, EventKind, const std::string&, double)>;
  ProgressBook(LiveLedger& ledger, Record record) : ledger_(ledger), record_(std::move(record)) {}

  //! A new attempt starts: its first step warms up, the slow-step window starts again.
  void launched();
  //! An elastic job running `share` of its replicas: of its steps' time, that share is productive
  //! and the rest `shrunk` (the simulator's ledger); its slower steps are no slowdown.
  void set_share(double share) { share_ = share; }
  void apply(const TrainerMessage& m, LiveLedger::Clock::time_point t);

  std::int64_t step() const { return step_; }
  std::int64_t saved_step() const { return saved_step_; }
  std::int64_t nan_step() const { return nan_step_; }
  //! The step the checkpoint interval counts from: the newest saved or restored (-1 before either).
  std::int64_t interval_from() const { return interval_from_; }
  bool done() const { return done_; }
  //! The node's step time (its baseline once known, else the last step's); 0 before the first step.
  double step_s() const { return steps_.baseline_s() > 0 ? steps_.baseline_s() : last_step_s_; }
  //! The median stall of the last saves (the trainer's `checkpoint` seconds: a first save's page
  //! faults do not weigh on it for long); -1 before the first.
  double save_s() const;

 private:
  void on_step(const TrainerMessage& m, LiveLedger::Clock::time_point t);
  LiveLedger& ledger_;
  Record record_;
  StepTimeWatch steps_;
  long steps_since_launch_ = 0, launches_ = 0;
  std::int64_t step_ = -1, saved_step_ = -1, nan_step_ = -1, interval_from_ = -1;
  bool done_ = false;
  double last_step_s_ = 0, share_ = 1;
  std::deque<double> recent_saves_s_;
  std::vector<std::pair<std::int64_t, Micros>> pending_excess_;  //!< steps' excess while a slowdown is being confirmed
};

}  // namespace ctwin::live
