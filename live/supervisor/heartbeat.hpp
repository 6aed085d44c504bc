#pragma once
//! What a trainer tells its supervisor: one line per message on the file descriptor named by
//! $CTWIN_HEARTBEAT_FD (a pipe; a write of one line is atomic). Any trainer can speak it, e.g.
//! Python's `os.write(fd, b"step 120 0.84\n")`; ctwin_flash.py has helpers.
//!   restored STEP memory|disk|none SECONDS   after restore at start (STEP -1: fresh start)
//!   step STEP SECONDS                        a training step finished (its wall time)
//!   checkpoint STEP SECONDS                  a save finished (the trainer's stall)
//!   nan STEP                                 the loss went NaN or Inf: the step did not land
//!   stopped STEP                             stopped on request (SIGTERM) after saving STEP
//!   done STEP                                the run is complete

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

namespace ctwin::live {

struct TrainerMessage {
  enum class Kind { Restored, Step, Checkpoint, Nan, Stopped, Done, Unknown } kind = Kind::Unknown;
  std::int64_t step = -1;
  double seconds = 0;
  std::string source;  //!< restored: memory, disk or none
};

inline TrainerMessage parse_trainer_message(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  TrainerMessage m;
  in >> word >> m.step;
  if (!in) return m;
  if (word == "restored") in >> m.source >> m.seconds, m.kind = TrainerMessage::Kind::Restored;
  else if (word == "step") in >> m.seconds, m.kind = TrainerMessage::Kind::Step;
  else if (word == "checkpoint") in >> m.seconds, m.kind = TrainerMessage::Kind::Checkpoint;
  else if (word == "nan") m.kind = TrainerMessage::Kind::Nan;
  else if (word == "stopped") m.kind = TrainerMessage::Kind::Stopped;
  else if (word == "done") m.kind = TrainerMessage::Kind::Done;
  if (!in && m.kind != TrainerMessage::Kind::Nan && m.kind != TrainerMessage::Kind::Stopped && m.kind != TrainerMessage::Kind::Done)
    m.kind = TrainerMessage::Kind::Unknown;
  return m;
}

}  // namespace ctwin::live
