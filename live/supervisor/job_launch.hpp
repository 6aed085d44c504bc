#pragma once
//! What a node under a job master needs to launch its part of the job and to say what it can
//! restore: the torchrun-compatible environment of the master's plan, and the checkpoint steps
//! every rank of this node holds complete.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "live/checkpoint/shm_slot.hpp"
#include "live/job/messages.hpp"

namespace ctwin::live {

//! Adds the plan's MASTER_ADDR, MASTER_PORT, NNODES, NODE_RANK, GROUP_RANK, WORLD_SIZE, RANK,
//! LOCAL_RANK, LOCAL_WORLD_SIZE, CTWIN_GENERATION and CTWIN_RESTORE_STEP to `env`, and fills
//! `{nnodes}`, `{node_rank}`, `{nproc_per_node}`, `{master_addr}`, `{master_port}` in `argv`, so
//! that `torchrun --nnodes {nnodes} --node_rank {node_rank} ...` and a plain `srun python train.py`
//! both find the job. A plan with no rendezvous port (a job of one) adds only the last two.
void add_job_environment(const Plan& plan, std::vector<std::pair<std::string, std::string>>& env, std::vector<std::string>& argv);

//! The steps all `ranks` ranks from `first.rank` on can restore, newest first: complete snapshots in
//! their shared-memory slots, and steps complete for every rank of `world` in `persist_dir` (empty: none)
//! whose shards for these ranks verify against their manifests' checksums (each shard read once
//! per process and the verdict kept, until the file changes). A step refused so is said in `refused`.
//! `replicated`: data-parallel replicas hold the same state, so steps saved at another world count.
std::vector<std::int64_t> steps_every_rank_holds(const flash::SlotLocation& first, int ranks, const std::string& persist_dir, int world,
                                                 bool replicated = false, std::vector<std::string>* refused = nullptr);

//! Claims `persist_dir` for `run` (a plan's "JOB/RUN-ID"): its file `ctwin-run` names the run whose
//! steps the folder holds. Empty when this node may restore them (the file is written when the
//! folder is new, or rewritten with `adopt`); else why not: another run's steps (or steps no run
//! claims), which a new job must not resume without being told.
std::string claim_persist_folder(const std::string& persist_dir, const std::string& run, bool adopt);

//! The master's checkpoint cadence for this node's trainers: a file ($CTWIN_CONTROL_FILE) in a
//! folder of its own, rewritten atomically when the plan brings a new revision; each trainer reads
//! it between steps (ctwin_flash.Supervisor.checkpoint_due), whatever launched it. It also names
//! the generation the trainers run and its restore step: a trainer kept across an in-process
//! restart rejoins when it changes (ctwin_flash.Supervisor.restartable, ctwin_ranks.py).
class CadenceFile {
 public:
  CadenceFile();
  ~CadenceFile();
  CadenceFile(const CadenceFile&) = delete;
  CadenceFile& operator=(const CadenceFile&) = delete;
  const std::string& path() const { return path_; }
  const std::string& folder() const { return folder_; }
  void publish(const CheckpointCadence& cadence, std::int64_t generation = 0, std::int64_t restore_step = -2);

 private:
  std::string folder_, path_;
  std::int64_t revision_ = -1, generation_ = -1;
};

//! A node's ranks' compute times (their `section` lines) between two reports to the master.
class SectionWindow {
 public:
  void add(int local_rank, int group, double seconds);
  //! Each rank's median since the last call, with its group; the window starts over.
  std::vector<RankSection> medians();

 private:
  std::map<int, std::pair<int, std::deque<double>>> ranks_;  //!< by local rank: its group, its times (the newest 64)
};

}  // namespace ctwin::live
