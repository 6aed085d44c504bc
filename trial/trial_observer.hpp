#pragma once
//! What a trial tells the outside world as it runs (core/event.hpp's events): the event log and
//! the timeline are written from these.

#include <vector>

#include "core/event.hpp"

namespace ctwin {

class TrialObserver {
 public:
  virtual ~TrialObserver() = default;
  virtual void on_event(const RunEvent& event) = 0;
  //! Checkpoint completions are folded into arithmetic unless an observer asks to see each one.
  virtual bool wants_checkpoints() const { return false; }
};

//! Keeps every event it is shown, checkpoints included (trial 0's log and timeline).
class EventRecorder final : public TrialObserver {
 public:
  std::vector<RunEvent> events;
  void on_event(const RunEvent& event) override { events.push_back(event); }
  bool wants_checkpoints() const override { return true; }
};

}  // namespace ctwin
