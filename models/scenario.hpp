#pragma once
//! Scenario format v1, parsed and validated: every quantity in SI units or integer microseconds.
//! The JSON form is documented in docs/scenario.md; `load_scenario` (scenario_loader.hpp) builds this.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_log.hpp"
#include "models/remediation.hpp"
#include "models/topology_spec.hpp"
#include "models/workload.hpp"
#include "core/units.hpp"

namespace ctwin {

inline constexpr int kScenarioSchemaVersion = 1;

//! Up-front limits: what a trial can hold in memory and time is refused beyond these with the
//! reason (exit 2), instead of running until the allocator or the OOM killer stops it.
inline constexpr double kLargestCheckpointPerGpu = 1e15;          //!< bytes
inline constexpr double kMostFaultsPerTrial = 1e7;                //!< expected fault episodes in one trial
inline constexpr std::size_t kLargestScenarioBytes = 16u << 20;   //!< a scenario file
inline constexpr double kSlowestSpeed = 1e-6;                     //!< a slow fault's smallest speed factor

enum class Distribution { Exponential, Weibull, Lognormal };
//! What a fault does to the job. Sdc: nothing visible until `detection`, then a rollback past every
//! checkpoint saved after the corruption. Flap: a link out for `recovery.duration`: ridden out as a
//! stall if shorter than `detection` (the watchdog), else a hang. None: counted only (e.g. Xid 92).
enum class Effect { Crash, Hang, Slow, Sdc, Flap, None };
//! What a slow GPU fault slows: its compute, its NVLink port (lanes down), or its NIC. A port's
//! factor is its bandwidth left; the step model turns it into the job's speed.
enum class SlowedPart { Compute, NvLink, Nic };

const char* to_string(Distribution d);
const char* to_string(Effect e);
//! The effect a scenario or the catalogue names; nullopt for an unknown name.
std::optional<Effect> effect_named(std::string_view name);

//! How sure a class's rate is: each trial draws a factor on it (the rate is the draws' median).
//! `events` over `exposure` (the evidence: a Gamma posterior, Jeffreys' prior, of shape events + 1/2),
//! or a lognormal `sigma` (a rate taken from other fleets).
struct RateUncertainty {
  std::optional<double> events;
  double exposure_component_s = 0;
  std::optional<double> sigma;
  //! How much fleets differ (a lognormal sigma between fleets of one hardware generation): one
  //! factor exp(fleet_sigma Z) a trial, the same Z for every class that has one (a fleet is worse
  //! or better as a whole), on top of the class's own uncertainty. 0: none.
  double fleet_sigma = 0;
  //! The population prior this rate's draws come from (ctwin calibrate writes its name), and the
  //! fleet's own exposure pooled with it (`fleet_exposure`; 0: the prior alone, no data of the
  //! fleet's). With some, the draws are the fleet's own posterior: validate's "does this fleet behave
  //! as its rates say" keeps drawing them.
  std::optional<std::string> prior;
  double fleet_exposure_component_s = 0;
  bool fleet_posterior() const { return prior && fleet_exposure_component_s > 0; }
};

//! The class groups a population prior pools fleets by (models/fleet_prior.hpp): a fleet's GPU
//! faults, its GPU memory's (HBM, SRAM ECC), its network's (NVLink, NIC, switch, cable), its
//! hosts' (CPU, memory, power, disk, unplanned maintenance) and its software's.
enum class ClassGroup { Gpu, GpuMemory, Network, Host, Software };
inline constexpr int kClassGroups = 5;
const char* to_string(ClassGroup g);
std::optional<ClassGroup> class_group_named(std::string_view name);
//! What a group's rates are per in a prior: GPU-days for the GPU groups, node-days for the rest.
inline Component group_component(ClassGroup g) { return g == ClassGroup::Gpu || g == ClassGroup::GpuMemory ? Component::Gpu : Component::Node; }

//! The live stops with no hardware signal, as policies.live_stops and a class's covers.signals name them.
inline bool live_stop_key(std::string_view key) { return key == "crash" || key == "hang" || key == "nan_loss" || key == "node_lost"; }

//! A class whose rate changes in time as a power law (Crow-AMSAA, MIL-HDBK-189): the rate given is
//! its intensity at the trial's start, and at t it is rate x ((age + t) / age)^(shape - 1), `age`
//! the time the trend has run (the calibrated traces' span). shape > 1: rising; < 1: falling.
struct RateTrend {
  double shape = 1;
  Micros age_us = 0;
};

//! Faults expected over `span` from a starting intensity `rate` (per unit of span's time), flat or
//! following the power law of `shape` begun `age` earlier: its cumulative intensity.
inline double expected_over(double rate, double span, double shape = 1, double age = 0) {
  if (age <= 0 || shape == 1) return rate * span;
  return rate * age / shape * (std::pow(1 + span / age, shape) - 1);
}

//! The most trials a run takes. Memory grows little with them (sim/run_tally.hpp: 14 bytes a trial
//! for the report's tail); time does: a million trials of the default scenario take about 30 s on
//! 2 cores (BENCHMARKS.md).
inline constexpr int kMaxTrials = 10'000'000;

struct FaultClass {
  std::string name;
  Rate rate;  //!< per component: 1 / mean time to failure of one component
  std::optional<RateUncertainty> uncertainty;
  std::optional<RateTrend> trend;  //!< exponential classes only
  //! The group a population prior pools this class in; classes of one group whose uncertainty is a
  //! sigma draw one factor between them a trial (the group's), not one each.
  std::optional<ClassGroup> group;
  Distribution distribution = Distribution::Exponential;
  double weibull_shape = 1.0;
  double lognormal_sigma = 1.0;  //!< of log(time to failure); the median follows from the mean
  Effect effect = Effect::Crash;
  double speed_factor = 1.0;  //!< Slow only: the job runs at this fraction of full speed
  SlowedPart slows = SlowedPart::Compute;  //!< Slow only; a port's factor becomes the job's through the step model
  Micros detection_us = 0;    //!< from the fault until it is noticed (a hang: the watchdog timeout)
  Micros diagnosis_us = 0;    //!< from notice until the culprit is known
  Act action = Act::Restart;  //!< what brings the job back (kFaultActions); only Replace needs a spare
  Micros action_us = 0;       //!< the action itself (reboot, reset, swap in a spare); Slow+None: how long it lasts
  std::optional<int> xid;     //!< NVIDIA Xid code, written as the event log's `code`

  //! What the class stands for, where it is a diagnosis category rather than one signal (Llama 3's
  //! "Faulty GPU" holds more than Xid 79): the Xids that count as it in a kernel log or a live run,
  //! and the live stops with no hardware signal it is (crash, hang, nan_loss, node_lost). Without
  //! `covers`, a class holds its own `xid` only.
  struct Covers {
    std::optional<std::vector<int>> xids;
    std::vector<std::string> signals;
    std::string category;
  };
  std::optional<Covers> covers;
  //! Whether any Xid counts as this class (a kernel log can see it).
  bool holds_any_xid() const { return covers && covers->xids ? !covers->xids->empty() : xid.has_value(); }
  //! Whether an Xid in a kernel log or a live run is this class's.
  bool holds_xid(int code) const {
    if (covers && covers->xids) return std::find(covers->xids->begin(), covers->xids->end(), code) != covers->xids->end();
    return xid && *xid == code;
  }

  //! Repeated faults on the same part escalate: the `after`-th within `within` takes this action.
  struct Escalation {
    int after = 2;
    Micros within_us = 0;
    Act action = Act::Replace;
    Micros action_us = 0;
  };
  std::optional<Escalation> escalation;

  //! A double-bit ECC error (Xid 48) leaves a row remap pending (Xid 63) until the GPU is next reset
  //! (reset_gpu, reboot). Each remap takes a spare row; one that fails, or finds none left, is
  //! Xid 64: the GPU goes for RMA and its node is replaced (in `replace_us`, the spare's swap).
  //! Correctable errors (a counted-only class, e.g. Xid 92) accumulate on their GPU, and every
  //! `after`-th asks for a remap the same way.
  struct RowRemap {
    int spare_rows = 8;
    double failure_probability = 0;
    Micros replace_us = 0;
    int after = 1;
  };
  std::optional<RowRemap> remap;
};

//! What happens to a replaced node, and to the spare pool (`spares` in a scenario).
struct RepairShop {
  Micros fixed_us = 0;                 //!< `repair_time`: the whole turnaround, when no distribution is given
  Micros triage_us = 0;                //!< automatic triage before the manual repair
  double repair_median_us = 0;         //!< lognormal manual repair, when > 0
  double repair_sigma = 0;
  double repair_mean_us = 0;           //!< exponential manual repair, when > 0
  double failure_probability = 0;      //!< a repair that fails sends the node to RMA
  Micros rma_us = 0;
  int hot_count = 0;                   //!< spares kept warm: swapping one in takes `hot_swap_us`
  Micros hot_swap_us = 0;
  double lemon_fraction = 0;           //!< nodes that fail `lemon_multiplier` times as often
  double lemon_multiplier = 1;
  double lemon_cure_probability = 0;   //!< a repair that mends a node for good: its lemon faults stop
  int retire_after = 0;                //!< retire a node at its N-th failure within the window (0: never)
  Micros retire_within_us = 0;
  double misdiagnosis_probability = 0; //!< the wrong node is replaced; the bad one fails again
  Micros recurrence_mean_us = 0;       //!< mean time until a misdiagnosed fault strikes again
};

//! Planned maintenance: every `interval` from `first`, the job saves, stops for `duration`, restarts.
struct Maintenance {
  Micros first_us = 0;
  Micros interval_us = 0;
  Micros duration_us = 0;
};

struct StorageSystem {
  int servers = 1;
  double write_bytes_per_s = 0;
  double read_bytes_per_s = 0;
  double network_bytes_per_s = 0;  //!< per server
};

struct Cluster {
  int nodes = 0;
  int gpus_per_node = 8;
  std::string gpu_model;
  double gpu_peak_bf16_flops = 0;
  double gpu_peak_fp8_flops = 0;  //!< 0: not given (twice the bf16 peak, as on Hopper)
  double gpu_memory_bytes = 0;  //!< 0: not given (a workload's memory is then reported, not checked)
  int spare_nodes = 0;
  StorageSystem storage;
  std::optional<TopologySpec> topology;  //!< needed by leaf, spine and cable faults
};

struct Job {
  int nodes = 0;
  Micros step_us = 0;                    //!< failure-free wall time of one step
  //! With a workload: the step the model gives on the scenario's fabric (resolve_step_time), beside
  //! a stated `step_us` that stands, or as `step_us` itself when none is stated. 0: no workload.
  Micros modelled_step_us = 0;
  bool step_modelled() const { return modelled_step_us > 0 && step_us == modelled_step_us; }
  //! The step's traffic on a node's scale-out link, whole and its exposed part: what a checkpoint
  //! crossing the compute fabric competes with (`dp_reduction`; with a workload, the step model's
  //! data-parallel, pipeline and context traffic between nodes).
  Micros traffic_us = 0;
  Micros traffic_exposed_us = 0;
  std::optional<double> tokens_per_step;
  std::optional<Micros> horizon_us;      //!< the run is a wall-clock window...
  std::optional<Micros> work_us;         //!< ...or a fixed amount of failure-free compute
  std::optional<double> work_steps;
};

enum class CheckpointMechanism { Sync, Flash };

struct Checkpointing {
  std::optional<double> size_per_gpu_bytes;  //!< physical model computes save/restore times...
  std::optional<Micros> save_us;             //!< ...unless the save time is given (sync: blocking; flash: the background persist)
  std::optional<Micros> restore_us;          //!< likewise for restore (from storage)
  double persist_bytes_per_s = 0;            //!< one node's bandwidth to storage
  CheckpointMechanism mechanism = CheckpointMechanism::Sync;
  // Flash (two-phase): a blocking snapshot to host memory, persisted in the background.
  Micros snapshot_us = 0;                    //!< the blocking device-to-host copy
  int persist_every = 1;                     //!< persist one snapshot in this many
  Micros memory_restore_us = 0;              //!< restore from a snapshot in (shared) host memory
  bool peer_replicas = false;                //!< each snapshot is copied to a peer node's memory
  std::optional<Micros> replication_us;      //!< the copy; computed over the node's link when not given
  std::optional<Micros> peer_restore_us;     //!< a lost node pulling its shard back; likewise
  bool save_on_failure = false;              //!< a crash that leaves the host up saves the live state first
};

//! How the job's processes come back after an interruption (`restart`, docs/model.md).
enum class RestartMechanism {
  Relaunch,     //!< every process anew: launcher, interpreter, imports, process group (`restart.overhead`)
  InProcess,    //!< the processes that survived re-enter the training function (NVRx in-process restart)
  WarmStandby,  //!< a replaced rank is taken by a process started ahead, its imports done
};
struct RestartMechanisms {
  RestartMechanism mechanism = RestartMechanism::Relaunch;
  Micros in_process_us = -1;    //!< `restart.in_process.overhead` (-1: not given)
  Micros warm_standby_us = -1;  //!< `restart.warm_standby.overhead` (-1: not given)
  //! The classes in-process restart takes (`restart.in_process.faults`); empty: every crash or hang
  //! whose remediation is a plain restart. A fault that reboots, resets or replaces never is.
  std::vector<std::string> in_process_faults;
};

struct CheckpointPolicySpec {
  enum class Kind { Fixed, Young, Daly, Adaptive };
  Kind kind = Kind::Fixed;
  Micros interval_us = 0;      //!< fixed: compute time between the end of one save and the start of the next
  std::optional<Micros> mtbf_us;  //!< young, daly: the job's MTBF (default: what the fault rates imply); adaptive: the prior
  double prior_weight = 1;        //!< adaptive: the prior counts as this many failures
};

//! Remediation policies (`policies` in a scenario): what the controller does beyond checkpointing.
struct XidActionSpec {
  Act action = Act::Restart;
  std::optional<Micros> action_us;  //!< default: the fault class's own duration
};
struct ElasticSpec {
  bool shrink = false;     //!< false: wait for a spare; true: drop whole replicas and regrow later
  //! Quorum (torchft): a replica that fails steps out while the others train on at reduced data
  //! parallelism, and rejoins once healed with the live state of a peer; no rollback.
  bool quorum = false;
  Micros reform_us = 0;    //!< quorum: the healthy replicas' pause to re-form without the failed one
  Micros recover_us = 0;   //!< quorum: a healed replica's copy of a peer's live state before it rejoins
  int replica_nodes = 1;   //!< nodes per data-parallel replica (tensor x pipeline parallel / GPUs per node)
  int min_replicas = 1;    //!< never shrink below this; wait instead
  bool regrow = true;      //!< add replicas back when whole replicas of nodes return
  //! Job speed with a replicas running, by a (0..replicas), when the step model gives it (a
  //! workload): the global batch is kept, so it beats a / replicas. Empty: a / replicas.
  std::vector<double> speed_by_replicas;
};
struct PrecheckSpec {
  bool enabled = false;           //!< run DLRover's node check in every diagnosis
  Micros duration_us = 0;         //!< both rounds
  double detect_probability = 1;  //!< a bad node that stayed in the job fails the check
  bool evict_stragglers = true;   //!< also evict nodes slower than 2 x the median
  int confirm_rounds = 1;         //!< a node the rounds call slow is measured again, this many times at most, beside a healthy one
};
struct StragglerSpec {
  bool evict = false;       //!< evict a slow node when the time saved beats a planned stop
  Micros observe_us = 0;    //!< step times watched this long before deciding
  double z_threshold = 3.5; //!< robust z-score (median/MAD) that marks a straggler
};

//! What the operator does when the spare pool runs low (`policies.spare_pool`): orders nodes from
//! elsewhere (a top-up: `top_up_nodes` join the pool `top_up_delay` after the order, ordered when
//! fewer than `top_up_below` spares are left, `top_up_at_most` nodes over the run), and expedites
//! repairs while the pool is dry (each node in the shop back within `expedited_repair`).
struct SparePoolSpec {
  int top_up_nodes = 0;                       //!< 0: no top-up
  Micros top_up_delay_us = 86400 * kMicrosPerSecond;  //!< [A] a day unless stated
  int top_up_below = 1;                       //!< 1: ordered when the pool is empty
  int top_up_at_most = 0;
  std::optional<Micros> expedited_repair_us;  //!< none: repairs take their time, dry pool or not
  bool any() const { return top_up_nodes > 0 || expedited_repair_us.has_value(); }
};

//! Hangs found by a heartbeat watchdog: timeout = factor x the longest step seen (at least `minimum`),
//! instead of each hang class's own detection time.
struct HangDetectionSpec {
  double factor = 5;
  Micros minimum_us = 0;
};

//! A run of losses far above the recent ones is a loss spike (policies/runtime_health.hpp's
//! LossSpikeWatch): above median + z x 1.4826 MAD of the last `window` and above `ratio` x their
//! median, `confirm` steps in a row. Live only: the simulator's SDC classes state their detection.
struct LossSpikeSpec {
  int window = 50;
  double z = 6;
  double ratio = 1.5;
  int confirm = 8;
};

//! A published figure the scenario is compared with (and was not built from).
struct Comparison {
  enum class Metric { Goodput, InterruptionsPerDay, Interruptions, LostHoursPerInterruption };
  enum class Relation { About, AtMost, AtLeast };
  Metric metric = Metric::Goodput;
  Relation relation = Relation::About;
  double published = 0;
  std::string source;
};
const char* to_string(Comparison::Metric m);
const char* to_string(Comparison::Relation r);

struct Scenario {
  int schema_version = kScenarioSchemaVersion;
  std::string name;
  std::string description;
  std::string content_hash;  //!< of the file as read, so reports name the scenario, not a path
  Cluster cluster;
  Job job;
  std::vector<FaultClass> faults;
  Checkpointing checkpoint;
  Micros restart_overhead_us = 0;  //!< relaunch of the job: scheduling, process start, NCCL init
  RestartMechanisms restart;       //!< in-process restart and warm standby, when the scenario has them
  RepairShop spares;
  std::optional<Maintenance> maintenance;
  CheckpointPolicySpec checkpoint_policy;
  std::map<int, XidActionSpec> xid_actions;  //!< Xid -> action, overriding the fault classes'
  ElasticSpec elastic;
  PrecheckSpec precheck;
  StragglerSpec stragglers;
  SparePoolSpec spare_pool;
  std::optional<HangDetectionSpec> hang_detection;
  LossSpikeSpec loss_spike;
  //! When given without a step time, the step time comes from it (sim/step_model.hpp).
  std::optional<WorkloadSpec> workload;
  std::vector<Comparison> compare;
  int trials = 100;
  std::uint64_t seed = 1;
  //! At the horizon (or max_wall), the work done since the last save: productive (the job goes on
  //! and no fault took it: the default) or lost progress (only saved work counts).
  bool unsaved_work_at_horizon_counts = true;
  //! false: no fault strikes while the job recovers (detection to restore), as simpler published
  //! models assume (Young's first-order interval, the classic (M + R)(e^((tau+delta)/M) - 1)).
  bool faults_during_recovery = true;
  //! How old the parts are when a trial starts: new (every Weibull or lognormal clock at age 0: a
  //! fleet just built) or stationary (an installed base in mid-life: each part's first failure
  //! comes from the equilibrium residual life, so the failure rate does not depend on the horizon).
  bool parts_start_stationary = false;
  //! `calibration.window`: how long the traces the rates were fitted on lasted (ctwin calibrate
  //! writes it); a forecast past it says so.
  std::optional<Micros> calibrated_window_us;
  Micros max_wall_us = 0;  //!< a trial that has not finished its work by then stops (reported)
  //! The scenario's class a live stop with no hardware signal counts as (policies.live_stops):
  //! the live event log names interruptions as the scenario does, so validate compares like with like.
  //! Empty: the catalogue's names (software_bug, nccl_hang, sdc; policies/fault_classes).
  struct LiveStopClasses {
    std::optional<std::string> crash, hang, nan_loss, node_lost;
    //! The entry for a stop by its name in policies.live_stops and covers.signals; null for another.
    std::optional<std::string>* named(std::string_view key) {
      return key == "crash" ? &crash : key == "hang" ? &hang : key == "nan_loss" ? &nan_loss : key == "node_lost" ? &node_lost : nullptr;
    }
  } live_stops;
};

//! The scenario's fault classes as an event log names them (`fault_class` indexes this table).
std::vector<EventClass> event_classes(const std::vector<FaultClass>& faults);

}  // namespace ctwin
