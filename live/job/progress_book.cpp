#include "live/job/progress_book.hpp"

#include <algorithm>
#include <vector>

namespace ctwin::live {

double ProgressBook::save_s() const {
  if (recent_saves_s_.empty()) return -1;
  std::vector<double> v(recent_saves_s_.begin(), recent_saves_s_.end());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

void ProgressBook::launched() {
  ++launches_;
  pending_excess_.clear();
  steps_since_launch_ = 0;
  steps_.restarted();
  nan_step_ = -1;
  done_ = false;
}

void ProgressBook::apply(const TrainerMessage& m, LiveLedger::Clock::time_point t) {
  using K = TrainerMessage::Kind;
  switch (m.kind) {
    case K::Restored: {
      ledger_.split(Category::CheckpointRestore, static_cast<Micros>(m.seconds * 1e6), Category::Restart, t);
      const double lost_s = ledger_.rolled_back_to(m.step);
      if (m.step >= 0)
        record_(ledger_.at(t), EventKind::RestoreBegin,
                "source=" + m.source + " step=" + std::to_string(m.step) + " seconds=" + exact_seconds(static_cast<Micros>(m.seconds * 1e6)) +
                    " lost_s=" + exact_seconds(static_cast<Micros>(lost_s * 1e6)),
                1.0);
      record_(ledger_.at(t), EventKind::Running, {}, 1.0);
      step_ = m.step;
      if (m.step >= 0) interval_from_ = m.step;
      break;
    }
    case K::Step: on_step(m, t); break;
    case K::Checkpoint:
      ledger_.charge(Category::CheckpointSave, t);
      saved_step_ = interval_from_ = m.step;
      if (m.seconds >= 0) recent_saves_s_.push_back(m.seconds);
      if (recent_saves_s_.size() > 15) recent_saves_s_.pop_front();
      record_(ledger_.at(t), EventKind::CheckpointDone, "step=" + std::to_string(m.step), 1.0);
      break;
    case K::Nan:
      ledger_.charge(Category::LostProgress, t);
      nan_step_ = m.step;
      break;
    case K::Stopped:
    case K::Done:
      ledger_.charge(Category::CheckpointSave, t);  // the last save, and waiting for it to persist
      done_ = m.kind == K::Done;
      break;
    case K::Section:  // a rank's compute time: the straggler watch's, not the ledger's
    case K::Persist:  // a persist's outcome: the agent turns a failed one into a storage fault, not the ledger
    case K::InProcess:     // the agent's to know: it keeps such a trainer across an in-process restart
    case K::Rejoining:
    case K::WorkerFailed:  // the agent turns it into the node's fault
    case K::Unknown: break;
  }
}

//! Between heartbeats the job was productive; while its steps run slower than the node's
//! baseline, the excess is degraded time.
void ProgressBook::on_step(const TrainerMessage& m, LiveLedger::Clock::time_point t) {
  const bool first_after_launch = steps_since_launch_ == 0;
  if (!first_after_launch) last_step_s_ = m.seconds;
  ++steps_since_launch_;
  if (share_ < 1) {  // shrunk: slower steps by design, not a slow node
    const Micros stretch = ledger_.at(t) - ledger_.marked();
    ledger_.split(Category::Productive, static_cast<Micros>(static_cast<double>(stretch) * share_), Category::Shrunk, t);
    ledger_.step_done(m.step);
    step_ = m.step;
    return;
  }
  // A restart's warm-up (its first steps, slower while caches fill and peers catch up): the time
  // beyond the baseline is the restart's, as the simulator's restart time holds it.
  const bool warming = first_after_launch || steps_.warming();
  if (warming && launches_ > 1 && steps_.baseline_s() > 0 && m.seconds > steps_.baseline_s()) {
    const Micros stretch = ledger_.at(t) - ledger_.marked();
    const auto excess = static_cast<Micros>(static_cast<double>(stretch) * (1 - steps_.baseline_s() / m.seconds));
    ledger_.split(Category::Productive, stretch - excess, Category::Restart, t);
    if (!first_after_launch) steps_.observe(m.seconds);
    ledger_.step_done(m.step);
    step_ = m.step;
    return;
  }
  if (!first_after_launch) {  // the first step after a launch warms up
    switch (steps_.observe(m.seconds)) {
      case StepTimeWatch::Change::SlowBegin:
        // Confirmed: the steps it took to confirm were slow too.
        for (const auto& [step, excess] : pending_excess_) ledger_.reclassify_productive(step, excess, Category::Degraded);
        pending_excess_.clear();
        record_(ledger_.at(t), EventKind::SlowBegin, "source=step_times", steps_.speed());
        break;
      case StepTimeWatch::Change::SlowEnd: record_(ledger_.at(t), EventKind::SlowEnd, "source=step_times", 1.0); break;
      case StepTimeWatch::Change::None: break;
    }
  }
  if (steps_.slow() && m.seconds > steps_.baseline_s()) {
    // Of the stretch since the last mark, the step's share beyond the baseline is degraded.
    const Micros stretch = ledger_.at(t) - ledger_.marked();
    const auto excess = static_cast<Micros>(static_cast<double>(stretch) * (1 - steps_.baseline_s() / m.seconds));
    ledger_.split(Category::Productive, stretch - excess, Category::Degraded, t);
  } else {
    const Micros stretch = ledger_.at(t) - ledger_.marked();
    ledger_.charge(Category::Productive, t);
    if (!steps_.pending()) pending_excess_.clear();
    else if (m.seconds > steps_.baseline_s())  // degraded if the slowdown is confirmed
      pending_excess_.emplace_back(m.step, static_cast<Micros>(static_cast<double>(stretch) * (1 - steps_.baseline_s() / m.seconds)));
  }
  ledger_.step_done(m.step);
  step_ = m.step;
}

}  // namespace ctwin::live
