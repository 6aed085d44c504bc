#pragma once
//! The live supervisor, the node's agent (`ctwin live run`, `ctwin live agent`): launches the
//! trainer, watches it (heartbeats and step times on a pipe, its exit, NVML and the kernel log),
//! reports every interruption and every observation to the job master (across the network, or in
//! this process for a job of one node), whose decisions are the policy library's controller's, the
//! same object the simulator consults, and carries out the plans it is given: restart and restore
//! from shared memory, reset or reboot or evict through the operator's commands (dry-run by
//! default), its own precheck. The job's ledger and event log are the master's alone (one set of
//! books); the agent keeps none, and serves its node's Prometheus metrics.
//!
//! One supervisor drives one trainer process on one node (the trainer may be a launcher with
//! workers: they share its process group). What interrupts a run:
//!  - the trainer exits with an error: `software_bug`, or the class of an Xid seen just before;
//!  - no heartbeat for the hang timeout (policies/hang_detection: factor x the longest interval
//!    between heartbeats, at least the minimum): `nccl_hang`;
//!  - the trainer reports a NaN loss: `sdc`, rolled back to the last checkpoint;
//!  - a health fault (an Xid, an uncorrected ECC error, a link down, a lost GPU) the master's
//!    controller does not let pass: the trainer is stopped (asked to save first when the
//!    scenario's checkpointing saves on failure), then the master's decision is carried out.

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "live/supervisor/actuators.hpp"
#include "live/job/coordination.hpp"
#include "models/scenario.hpp"

namespace ctwin::live {

struct SupervisorOptions {
  std::vector<std::string> trainer;        //!< command line
  int node = 0;                            //!< this node's index ($CTWIN_NODE, the metrics' label)
  std::string host;                        //!< for {host} in commands (default: the host name)
  std::string flash_name = "ctwin";        //!< the trainer's flash checkpoint name ($CTWIN_FLASH_NAME)
  std::string persist_dir;                 //!< $CTWIN_FLASH_PERSIST_DIR; the supervisor persists a crashed trainer's newest snapshot there
  std::string shm_dir = "/dev/shm";
  int flash_ranks = 1;                     //!< trainer ranks on this node with flash slots
  int max_restarts = 10;
  double startup_timeout_s = 1800;         //!< launch to the `restored` line
  std::optional<double> hang_minimum_s;    //!< overrides the scenario's hang_detection minimum
  double stop_grace_s = 60;                //!< SIGTERM (save, then exit) before SIGKILL
  double section_report_s = 10;            //!< under a master: each rank's compute time (median) this often
  bool nvml = true;                        //!< use NVML when it loads
  double health_interval_s = 1;
  double nvml_stall_s = 30;                //!< an NVML poll stuck this long is a fault
  std::string kernel_log;                  //!< a file or FIFO with kernel messages; empty: none
  ActuatorCommands actuators;
  std::string precheck;                    //!< this node's own precheck command (sh -c), run when a plan names a task for it; empty: none
  std::string metrics_host = "127.0.0.1";
  int metrics_port = 9402;                 //!< < 0: no metrics; 0: any free port
  //! A trainer not changed for ctwin: its output's step lines (Megatron-LM, tqdm bars; core/step_lines)
  //! stand in for heartbeats, and the step it resumed from is read off the first one.
  bool passive = false;
  //! Keep one trainer process started ahead (live/supervisor/warm_standby.hpp): a launch hands it
  //! the attempt instead of starting a process. For launchers that take it (build/ctwin_ranks.py).
  bool warm_standby = false;
  //! The job master (required): it plans launches and restarts for the whole job and keeps its
  //! books; this node reports its faults and what it sees, and follows. An agent's link (`ctwin live
  //! agent`), or a job of one (live/job/local_coordination.hpp) for `ctwin live run`.
  Coordination* coordination = nullptr;
};

struct SupervisorResult {
  int exit_code = 0;         //!< 0 the trainer finished; 1 gave up (restarts spent, node evicted)
  int restarts = 0;
  std::int64_t last_step = -1;
  double wall_s = 0;         //!< the supervisor's own time (the job's ledger is the master's)
  std::string reason;        //!< why it stopped
};

//! Set from a signal handler: stop the trainer gracefully (it saves) and close the log.
std::atomic<bool>& supervisor_stop_flag();

SupervisorResult supervise(const Scenario& scenario, const SupervisorOptions& options);

}  // namespace ctwin::live
