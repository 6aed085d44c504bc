#pragma once
//! When to checkpoint. Engine-neutral: the simulator's trial and the live controller ask the same
//! objects. Fixed; Young's first-order optimum sqrt(2 delta M); Daly's higher-order one; and an
//! adaptive policy that estimates the MTBF online from the failures seen (Gamma prior) and takes
//! Daly's interval for it. Simulation, not these formulas, decides which is best (`ctwin optimize`).

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/units.hpp"
#include "models/scenario.hpp"

namespace ctwin {

//! What a checkpoint-interval policy sees when the job (re)starts: the trial and the live master
//! ask the same objects through this interface.
struct IntervalContext {
  Micros now_us = 0;
  std::int64_t failures_seen = 0;  //!< interruptions so far in this run
  Micros save_us = 0;
  Micros restart_us = 0;
};
class IntervalPolicy {
 public:
  virtual ~IntervalPolicy() = default;
  //! Compute time between saves, from this (re)start until the next.
  virtual Micros interval_us(const IntervalContext& context) const = 0;
  //! The MTBF the interval plans for (what the live job's log shows); 0 for a fixed interval.
  virtual double planned_mtbf_s(const IntervalContext&) const { return 0; }
};

//! Young (1974): tau = sqrt(2 delta M).
double young_interval_s(double save_s, double mtbf_s);
//! Daly (2006), eq. 37: sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta for
//! delta < 2M, else M.
double daly_interval_s(double save_s, double mtbf_s);

class FixedIntervalPolicy final : public IntervalPolicy {
 public:
  explicit FixedIntervalPolicy(Micros interval_us) : interval_us_(interval_us) {}
  Micros interval_us(const IntervalContext&) const override { return interval_us_; }

 private:
  Micros interval_us_;
};

class YoungPolicy final : public IntervalPolicy {
 public:
  explicit YoungPolicy(double mtbf_s) : mtbf_s_(mtbf_s) {}
  Micros interval_us(const IntervalContext& c) const override;
  double planned_mtbf_s(const IntervalContext&) const override { return mtbf_s_; }

 private:
  double mtbf_s_;
};

class DalyPolicy final : public IntervalPolicy {
 public:
  explicit DalyPolicy(double mtbf_s) : mtbf_s_(mtbf_s) {}
  Micros interval_us(const IntervalContext& c) const override;
  double planned_mtbf_s(const IntervalContext&) const override { return mtbf_s_; }

 private:
  double mtbf_s_;
};

//! MTBF estimated as (w M0 + T) / (w + n): a Gamma prior worth `w` failures at MTBF M0, updated
//! with n failures seen in T; the interval is Daly's for that estimate.
class AdaptivePolicy final : public IntervalPolicy {
 public:
  AdaptivePolicy(double prior_mtbf_s, double prior_weight) : prior_mtbf_s_(prior_mtbf_s), prior_weight_(prior_weight) {}
  Micros interval_us(const IntervalContext& c) const override;
  double estimated_mtbf_s(const IntervalContext& c) const;
  double planned_mtbf_s(const IntervalContext& c) const override { return estimated_mtbf_s(c); }

 private:
  double prior_mtbf_s_;
  double prior_weight_;
};

//! The policy a scenario's `policies.checkpoint` names. `job_mtbf_s` is the MTBF the scenario's
//! fault rates imply, used when the section gives none.
std::unique_ptr<IntervalPolicy> make_checkpoint_policy(const CheckpointPolicySpec& spec, double job_mtbf_s);

//! The job's mean time between interruptions that the fault rates imply: every class that stops
//! the job (crash, hang, SDC, a flap the watchdog catches, a network part that cuts a node out).
double implied_job_mtbf_s(const Scenario& scenario);

// --- the interval, live: in steps, the same on every rank -----------------------------------------

//! From step `from` on, a save every `every` steps (one at `from` itself).
struct CadenceChange {
  std::int64_t from = 0, every = 0;
};

//! Which steps a live job saves. Ranks of a synchronous job must save the same steps (a restore
//! takes the newest step every rank holds), so the live master turns the policy's interval into
//! steps and each change into a step number ahead of the job, far enough that every node has heard
//! of it before it applies. Before the first change, the trainer's own cadence holds.
struct CheckpointCadence {
  static constexpr std::size_t kKept = 4;  //!< the newest changes (a rank restored before the last one goes by the ones before)
  std::int64_t revision = 0;               //!< one more at each change
  std::vector<CadenceChange> changes;      //!< oldest first
  bool saves_at(std::int64_t step, std::int64_t default_every) const;
  void add(const CadenceChange& change);
};

//! Steps of `step_s` in a compute interval of `interval_s`, at least one.
std::int64_t steps_per_interval(double interval_s, double step_s);

//! The change to `every` steps a job at `step` should make, or nullopt: none when it differs from
//! the current cadence by no more than `hysteresis` (a fraction), so that noise in the measured
//! costs does not move the cadence at every report (a negative one: always a change, as after an
//! interruption, which is news rather than noise). It applies `lead_steps` ahead or later.
//! `last_save` (the newest step saved or restored; -1 unknown) keeps the phase: the simulator counts
//! each interval from the last save or resume, so the change starts `every` after it when that is
//! far enough ahead (and no save of the current rule comes first), else at the current rule's first
//! save past the lead. A change dated at `step + lead` instead would add a save and shift the phase
//! at every re-plan (the twin loop's crashes all fell late in their interval).
std::optional<CadenceChange> next_cadence(const CheckpointCadence& current, std::int64_t every, std::int64_t step, std::int64_t lead_steps,
                                          double hysteresis = 0.1, std::int64_t last_save = -1);

}  // namespace ctwin
