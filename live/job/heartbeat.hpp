#pragma once
//! What a trainer tells its supervisor: one line per datagram sent to the Unix socket at
//! $CTWIN_HEARTBEAT_SOCKET (SOCK_DGRAM: a message is never split or interleaved, whichever process
//! of the trainer sends it). Any trainer can speak it, e.g. Python's
//! `socket.socket(AF_UNIX, SOCK_DGRAM).sendto(b"step 120 0.84 rank=0", path)`; ctwin_flash.py has
//! helpers. A message may end with `rank=R`, the node-local rank ($LOCAL_RANK) that sent it: rank 0
//! speaks for the node, another rank's messages count only when they report a NaN.
//!   restored STEP memory|disk|none SECONDS   after restore at start (STEP -1: fresh start)
//!   step STEP SECONDS [LOSS]                 a training step finished (its wall time; its loss, if said)
//!   checkpoint STEP SECONDS                  a save finished (the trainer's stall)
//!   nan STEP                                 the loss went NaN or Inf: the step did not land
//!   stopped STEP                             stopped on request (SIGTERM) after saving STEP
//!   done STEP                                the run is complete
//!   persist STEP failed WHY...               this rank's persister could not write STEP (a full disk,
//!                                            a quota, I/O): training goes on from memory, it retries
//!   persist STEP ok                          it writes again (STEP on disk) after failing; every rank
//!                                            says both, and either is a sign of life
//!   section STEP SECONDS GROUP               this rank's compute in the step, collectives excluded
//!                                            (CUDA events on a GPU, wall time on a CPU), and its
//!                                            group: its pipeline stage and role, as one number.
//!                                            Every rank sends it: stragglers are found by rank.
//!   inprocess GENERATION                     this trainer rejoins a new generation in its processes
//!                                            (ctwin_flash.Supervisor.restartable): an in-process
//!                                            restart keeps it (messages.hpp Plan::in_process)
//!   rejoining GENERATION                     this rank's collectives failed and its process group is
//!                                            torn down: it waits for the next generation
//!   failed STATUS                            a launcher that outlives its workers (ctwin_ranks.py):
//!                                            its worker `rank=R` exited with STATUS (code, or 128 +
//!                                            signal); it replaces it at the job's next generation

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

namespace ctwin::live {

struct TrainerMessage {
  enum class Kind { Restored, Step, Checkpoint, Nan, Stopped, Done, Section, Persist, InProcess, Rejoining, WorkerFailed, Unknown } kind = Kind::Unknown;
  std::int64_t step = -1;
  double seconds = 0;
  std::string source;  //!< restored: memory, disk or none
  int rank = 0;        //!< the node-local rank that sent it (`rank=R`; 0 when not said)
  int group = 0;       //!< section: the rank's pipeline stage and role
  std::optional<double> loss;  //!< step: the loss, when the trainer says it
  bool persist_failed = false;  //!< persist: failed (else ok)
  std::string detail;           //!< persist failed: why
};

inline TrainerMessage parse_trainer_message(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  TrainerMessage m;
  in >> word >> m.step;
  if (!in) return m;
  if (word == "restored") in >> m.source >> m.seconds, m.kind = TrainerMessage::Kind::Restored;
  else if (word == "step") {
    if (in >> m.seconds) {
      m.kind = TrainerMessage::Kind::Step;
      std::string more;  // the loss, or already the rank
      if (in >> more && more.rfind("rank=", 0) != 0) {
        char* end = nullptr;
        const double loss = std::strtod(more.c_str(), &end);
        if (end == more.c_str() + more.size()) m.loss = loss;
        else m.kind = TrainerMessage::Kind::Unknown;
      }
      in.clear();
    }
  }
  else if (word == "checkpoint") in >> m.seconds, m.kind = TrainerMessage::Kind::Checkpoint;
  else if (word == "nan") m.kind = TrainerMessage::Kind::Nan;
  else if (word == "stopped") m.kind = TrainerMessage::Kind::Stopped;
  else if (word == "done") m.kind = TrainerMessage::Kind::Done;
  else if (word == "inprocess") m.kind = TrainerMessage::Kind::InProcess;
  else if (word == "rejoining") m.kind = TrainerMessage::Kind::Rejoining;
  else if (word == "failed") m.kind = TrainerMessage::Kind::WorkerFailed;
  else if (word == "section") in >> m.seconds >> m.group, m.kind = TrainerMessage::Kind::Section;
  else if (word == "persist") {
    std::string outcome;
    in >> outcome;
    if (outcome == "ok" || outcome == "failed") m.kind = TrainerMessage::Kind::Persist, m.persist_failed = outcome == "failed";
    if (m.persist_failed) {
      std::getline(in, m.detail);
      if (const auto at = m.detail.rfind(" rank="); at != std::string::npos) m.detail.erase(at);
      m.detail.erase(0, m.detail.find_first_not_of(' '));
      if (m.detail.size() > 400) m.detail.resize(400);
    }
    in.clear();
  }
  if (!in && m.kind != TrainerMessage::Kind::Nan && m.kind != TrainerMessage::Kind::Stopped && m.kind != TrainerMessage::Kind::Done &&
      m.kind != TrainerMessage::Kind::Persist && m.kind != TrainerMessage::Kind::InProcess && m.kind != TrainerMessage::Kind::Rejoining &&
      m.kind != TrainerMessage::Kind::WorkerFailed)
    m.kind = TrainerMessage::Kind::Unknown;
  // Seconds become integer microseconds in the ledger: NaN, negative or beyond any run is not a
  // message (a float-to-integer conversion out of range is undefined behaviour).
  if (!(m.seconds >= 0 && m.seconds <= 1e9) || m.group < 0 || m.group > 1'000'000) m.kind = TrainerMessage::Kind::Unknown;
  if (const auto at = line.rfind(" rank="); at != std::string::npos) {
    char* end = nullptr;
    const long rank = std::strtol(line.c_str() + at + 6, &end, 10);
    if (end == line.c_str() + at + 6 || *end != '\0' || rank < 0 || rank > 1'000'000) m.kind = TrainerMessage::Kind::Unknown;
    else m.rank = static_cast<int>(rank);
  }
  return m;
}

}  // namespace ctwin::live
