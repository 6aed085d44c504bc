#pragma once
//! The fault timeline of one trial: which component fails when, in wall-clock order.
//!
//! It depends only on the scenario and the trial seed, never on what the job is doing, so the
//! native and SimGrid engines, and every policy, consume the very same sequence. Exponential classes are drawn as
//! the superposition of all components' Poisson processes (O(1) per fault). For a Weibull class,
//! the first failures among the m parts still in their first life form a stream whose cumulative
//! hazard (t/scale)^k grows by Exp(1)/m per failure, the victim uniform among those parts: exact,
//! and O(1) per fault instead of one clock per GPU. A failed part's replacement gets its own clock,
//! starting when it is back in service. Lognormal classes keep one clock per part from the start.
//! With a stationary start (an installed base in mid-life), each part's first failure comes from
//! the equilibrium residual life instead: for a Weibull class its survival is the regularised
//! upper incomplete gamma Q(1/k, (t/scale)^k), inverted the same way, still O(1) per fault; for a
//! lognormal class, a uniform fraction of a length-biased life.

#include <cstdint>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "models/scenario.hpp"

namespace ctwin {

struct FaultStrike {
  Micros time = kNever;
  std::uint32_t fault_class = 0;
  std::int32_t slot = -1;  //!< node position in the job (0 .. job nodes - 1); for a network class, the part's index
  std::int32_t gpu = -1;   //!< GPU index within the node; -1 for node-level faults
  std::int32_t node = -1;  //!< a lemon's extra fault names the physical node instead of a slot
};

//! What the timeline needs from a scenario, precomputed once per run.
struct FaultTimelineModel {
  struct ClassInfo {
    Distribution distribution;
    double rate_per_us;        //!< per component
    double weibull_scale_us;   //!< Weibull only: scale from the mean, mean = scale * Gamma(1 + 1/k)
    double weibull_shape;
    double lognormal_mu = 0;   //!< Lognormal only: log-space mean (of microseconds), from the mean
    double lognormal_sigma = 1;
    std::int64_t components;   //!< the job's nodes or GPUs, or the fabric's leaves, spines or cables
    bool per_gpu;
    Micros renewal_delay_us;   //!< Weibull: the new part starts aging when it is back in service
    double nominal_rate_per_us = 0;  //!< the scenario's rate, before a trial's draw of its uncertainty
    bool network = false;
    //! The rate's uncertainty (RateUncertainty): a trial's factor is Gamma(gamma_shape) / gamma_median,
    //! or exp(sigma Z); neither (both 0): the rate is held exact.
    double gamma_shape = 0, gamma_median = 1, sigma = 0;
    double fleet_sigma = 0;  //!< times exp(fleet_sigma Z), Z one draw a trial shared by the classes
    int group = -1;          //!< ClassGroup: a sigma draw shared with the group's other classes; -1: its own

    //! A power law in time (RateTrend): the rate is the intensity at the start; 0: no trend.
    double trend_shape = 1, trend_age_us = 0;
  };
  std::vector<ClassInfo> classes;
  std::vector<std::uint32_t> exponential_classes;  //!< without a trend: one merged stream
  std::vector<std::uint32_t> trending_classes;     //!< exponential with a trend: a stream each
  std::vector<double> exponential_cumulative;  //!< running sums of component rates, for the class draw
  double exponential_total_per_us = 0;
  int gpus_per_node = 1;
  bool stationary_start = false;  //!< first lives from the equilibrium residual, not from age 0
  // Lemon nodes: drawn per trial among the job's and spares' nodes; each fails (multiplier - 1)
  // times more often in every exponential node or GPU class, while it is in the job.
  int tracked_nodes = 0;
  double lemon_fraction = 0;
  std::vector<std::uint32_t> lemon_classes;
  std::vector<double> lemon_cumulative;  //!< extra rate per lemon node, running sums over lemon_classes
  double lemon_total_per_node_us = 0;
  double lemon_multiplier = 1;

  static FaultTimelineModel from(const Scenario& scenario);
  //! Whether any class's rate carries an uncertainty.
  bool rates_uncertain() const;
  //! The faults a trial draws over `span_us`, expected at the nominal rates (lemons' extra ones
  //! included): what a trial's cost grows with.
  double expected_strikes(Micros span_us) const;
  //! The model of one trial: each uncertain class's rate times a factor drawn for `trial_seed`
  //! (the rate is the factors' median). A class's draw depends on the trial and the class's
  //! position only: every variant of a sweep sees the same rates in the same trial.
  FaultTimelineModel with_rates_drawn(std::uint64_t trial_seed) const;
  //! The factors a trial draws, by class (1 for a rate held exact).
  std::vector<double> rate_factors(std::uint64_t trial_seed) const;

 private:
  void set_rates(const std::vector<double>& factors);
};

class FaultTimeline {
 public:
  FaultTimeline(const FaultTimelineModel& model, std::uint64_t seed);

  const FaultStrike& peek() const { return next_; }
  FaultStrike pop();

 private:
  struct Clock {
    Micros time;
    std::uint32_t fault_class;
    std::int64_t component;
    bool operator>(const Clock& o) const {
      return time != o.time ? time > o.time : (fault_class != o.fault_class ? fault_class > o.fault_class : component > o.component);
    }
  };

  //! First failures of the parts a Weibull class started with.
  //! An exponential class whose rate follows a power law in time: its own stream, drawn by
  //! inverting its cumulative intensity.
  struct Trending {
    std::uint32_t fault_class;
    double hazard = 0;  //!< cumulative intensity used so far
    FaultStrike next;
  };

  struct FirstLives {
    std::uint32_t fault_class;
    double cumulative_hazard = 0;     //!< (t / scale)^k of the last first failure
    std::int64_t survivors = 0;       //!< parts still in their first life
    std::vector<char> failed;         //!< per component: its first life has ended
    FaultStrike next;
  };
  enum class Source { Exponential, FirstLife, Trending, Renewed, Lemon, None };

  FaultStrike make_strike(Micros time, std::uint32_t fault_class, std::int64_t component) const;
  void draw_next_exponential();
  void draw_next_first_life(FirstLives& lives);
  void draw_next_trending(Trending& t);
  void draw_next_lemon();
  Micros draw_ttf_us(const FaultTimelineModel::ClassInfo& info);  //!< Weibull or lognormal
  Micros draw_residual_us(const FaultTimelineModel::ClassInfo& info);  //!< lognormal, a part in mid-life
  void choose_next();

  const FaultTimelineModel& model_;
  Rng rng_;
  double exponential_clock_us_ = 0;  //!< continuous, so rounding never accumulates
  FaultStrike next_exponential_;
  std::vector<FirstLives> first_lives_;
  std::set<std::pair<Micros, std::size_t>> first_life_order_;  //!< each one's next failure and its index: the earliest in O(log n)
  std::vector<Trending> trending_;
  std::set<std::pair<Micros, std::size_t>> trending_order_;
  std::priority_queue<Clock, std::vector<Clock>, std::greater<>> renewed_;
  Rng lemon_rng_;
  std::vector<std::int32_t> lemons_;
  double lemon_clock_us_ = 0;
  FaultStrike next_lemon_;
  FaultStrike next_;
  Source next_source_ = Source::None;
  std::size_t next_first_life_ = 0, next_trending_ = 0;
};

}  // namespace ctwin
