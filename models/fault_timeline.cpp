#include "models/fault_timeline.hpp"

#include "models/network_domains.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <boost/math/distributions/gamma.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/geometric_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/weibull_distribution.hpp>

namespace ctwin {

namespace {

//! The first index whose running sum is above `pick` (the last one when none is): the class a
//! uniform pick over the sums falls in, found in O(log n).
std::size_t first_above(const std::vector<double>& cumulative, double pick) {
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), pick);
  return std::min(static_cast<std::size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

}  // namespace

FaultTimelineModel FaultTimelineModel::from(const Scenario& scenario) {
  FaultTimelineModel m;
  m.gpus_per_node = scenario.cluster.gpus_per_node;
  m.stationary_start = scenario.parts_start_stationary;
  for (std::uint32_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultClass& f = scenario.faults[i];
    ClassInfo info{};
    info.distribution = f.distribution;
    info.nominal_rate_per_us = f.rate.per_component_second / 1e6;
    info.weibull_shape = f.weibull_shape;
    info.lognormal_sigma = f.lognormal_sigma;
    if (f.trend) info.trend_shape = f.trend->shape, info.trend_age_us = static_cast<double>(f.trend->age_us);
    info.per_gpu = f.rate.component == Component::Gpu;
    info.network = is_network(f.rate.component);
    info.components = component_count(scenario, f);
    info.renewal_delay_us = f.detection_us + f.diagnosis_us + f.action_us;
    if (f.uncertainty && f.uncertainty->events) {
      info.gamma_shape = *f.uncertainty->events + 0.5;  // Jeffreys' prior
      info.gamma_median = boost::math::quantile(boost::math::gamma_distribution<double>(info.gamma_shape), 0.5);
    } else if (f.uncertainty && f.uncertainty->sigma) {
      info.sigma = *f.uncertainty->sigma;
    }
    if (f.uncertainty) info.fleet_sigma = f.uncertainty->fleet_sigma;
    if (f.group) info.group = static_cast<int>(*f.group);
    m.classes.push_back(info);
  }
  m.tracked_nodes = scenario.job.nodes + scenario.cluster.spare_nodes;
  m.lemon_fraction = scenario.spares.lemon_fraction;
  m.lemon_multiplier = scenario.spares.lemon_multiplier;
  m.set_rates(std::vector<double>(m.classes.size(), 1.0));
  return m;
}

void FaultTimelineModel::set_rates(const std::vector<double>& factors) {
  exponential_classes.clear();
  trending_classes.clear();
  exponential_cumulative.clear();
  exponential_total_per_us = 0;
  lemon_classes.clear();
  lemon_cumulative.clear();
  lemon_total_per_node_us = 0;
  for (std::uint32_t i = 0; i < classes.size(); ++i) {
    ClassInfo& info = classes[i];
    info.rate_per_us = info.nominal_rate_per_us * factors[i];
    if (info.rate_per_us > 0 && info.distribution == Distribution::Weibull)
      info.weibull_scale_us = (1.0 / info.rate_per_us) / boost::math::tgamma(1.0 + 1.0 / info.weibull_shape);
    if (info.rate_per_us > 0 && info.distribution == Distribution::Lognormal)  // mean = exp(mu + sigma^2 / 2)
      info.lognormal_mu = std::log(1.0 / info.rate_per_us) - info.lognormal_sigma * info.lognormal_sigma / 2;
    if (info.distribution == Distribution::Exponential && info.rate_per_us > 0 && info.trend_age_us > 0) {
      trending_classes.push_back(i);  // its own stream; lemons multiply the classes without a trend
    } else if (info.distribution == Distribution::Exponential && info.rate_per_us > 0) {
      exponential_total_per_us += info.rate_per_us * static_cast<double>(info.components);
      exponential_classes.push_back(i);
      exponential_cumulative.push_back(exponential_total_per_us);
      if (!info.network && lemon_fraction > 0) {
        const double per_node = info.rate_per_us * (info.per_gpu ? gpus_per_node : 1);
        lemon_total_per_node_us += (lemon_multiplier - 1) * per_node;
        lemon_classes.push_back(i);
        lemon_cumulative.push_back(lemon_total_per_node_us);
      }
    }
  }
}

double FaultTimelineModel::expected_strikes(Micros span_us) const {
  double per_us = lemon_total_per_node_us * lemon_fraction * static_cast<double>(tracked_nodes);
  double strikes = 0;
  for (const auto& c : classes) {
    const double r = c.nominal_rate_per_us * static_cast<double>(c.components);
    if (c.trend_age_us <= 0) per_us += r;
    else strikes += expected_over(r, static_cast<double>(span_us), c.trend_shape, c.trend_age_us);
  }
  return strikes + per_us * static_cast<double>(span_us);
}

bool FaultTimelineModel::rates_uncertain() const {
  return std::any_of(classes.begin(), classes.end(), [](const ClassInfo& c) { return c.gamma_shape > 0 || c.sigma > 0 || c.fleet_sigma > 0; });
}

std::vector<double> FaultTimelineModel::rate_factors(std::uint64_t trial_seed) const {
  std::vector<double> factors(classes.size(), 1.0);
  // Which fleet this trial's is: one draw for every class, from a stream of its own ("FLEET").
  Rng fleet_rng(splitmix64(trial_seed ^ splitmix64(0x464C454554ULL)));
  const double fleet_z = boost::random::normal_distribution<double>()(fleet_rng);
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const ClassInfo& c = classes[i];
    if (c.fleet_sigma > 0) factors[i] = std::exp(c.fleet_sigma * fleet_z);
    if (c.gamma_shape <= 0 && c.sigma <= 0) continue;
    // "RATE", a stream per class; a group's sigma draws one stream between its classes ("GROUP").
    const bool shared = c.sigma > 0 && c.group >= 0;
    Rng rng(splitmix64(trial_seed ^ splitmix64(shared ? 0x47524F5550ULL + static_cast<std::uint64_t>(c.group) : 0x52415445ULL + i)));
    if (c.gamma_shape > 0) factors[i] *= boost::random::gamma_distribution<double>(c.gamma_shape)(rng) / c.gamma_median;
    else factors[i] *= std::exp(c.sigma * boost::random::normal_distribution<double>()(rng));
  }
  return factors;
}

FaultTimelineModel FaultTimelineModel::with_rates_drawn(std::uint64_t trial_seed) const {
  FaultTimelineModel m = *this;
  m.set_rates(rate_factors(trial_seed));
  return m;
}

FaultTimeline::FaultTimeline(const FaultTimelineModel& model, std::uint64_t seed)
    : model_(model), rng_(seed), lemon_rng_(splitmix64(seed ^ 0x4C454D4F4E53ULL)) {
  draw_next_exponential();
  if (model_.lemon_fraction > 0 && model_.lemon_total_per_node_us > 0) {
    // Each node is a lemon with probability p: draw the gaps between lemons (geometric), not every node.
    if (model_.lemon_fraction >= 1) {
      for (std::int32_t node = 0; node < model_.tracked_nodes; ++node) lemons_.push_back(node);
    } else {
      boost::random::geometric_distribution<std::int64_t, double> gap(model_.lemon_fraction);
      for (std::int64_t node = gap(lemon_rng_); node < model_.tracked_nodes; node += 1 + gap(lemon_rng_))
        lemons_.push_back(static_cast<std::int32_t>(node));
    }
  }
  draw_next_lemon();
  for (std::uint32_t c = 0; c < model_.classes.size(); ++c) {
    const auto& info = model_.classes[c];
    if (info.distribution != Distribution::Weibull || info.rate_per_us <= 0 || info.components <= 0) continue;
    FirstLives lives;
    lives.fault_class = c;
    lives.survivors = info.components;
    lives.failed.assign(static_cast<std::size_t>(info.components), 0);
    first_lives_.push_back(std::move(lives));
  }
  for (std::size_t i = 0; i < first_lives_.size(); ++i) {
    draw_next_first_life(first_lives_[i]);
    first_life_order_.insert({first_lives_[i].next.time, i});
  }
  for (const std::uint32_t c : model_.trending_classes) trending_.push_back({c, 0, {}});
  for (std::size_t i = 0; i < trending_.size(); ++i) {
    draw_next_trending(trending_[i]);
    trending_order_.insert({trending_[i].next.time, i});
  }
  for (std::uint32_t c = 0; c < model_.classes.size(); ++c) {
    const auto& info = model_.classes[c];
    if (info.distribution != Distribution::Lognormal || info.rate_per_us <= 0) continue;
    for (std::int64_t component = 0; component < info.components; ++component) {
      const Micros first = model_.stationary_start ? draw_residual_us(info) : draw_ttf_us(info);
      if (first != kNever) renewed_.push({first, c, component});
    }
  }
  choose_next();
}

FaultStrike FaultTimeline::make_strike(Micros time, std::uint32_t fault_class, std::int64_t component) const {
  FaultStrike s;
  s.time = time;
  s.fault_class = fault_class;
  if (model_.classes[fault_class].per_gpu) {
    s.slot = static_cast<std::int32_t>(component / model_.gpus_per_node);
    s.gpu = static_cast<std::int32_t>(component % model_.gpus_per_node);
  } else {
    s.slot = static_cast<std::int32_t>(component);
  }
  return s;
}

void FaultTimeline::draw_next_exponential() {
  if (model_.exponential_total_per_us <= 0) {
    next_exponential_ = FaultStrike{};
    return;
  }
  exponential_clock_us_ += boost::random::exponential_distribution<double>(1.0)(rng_) / model_.exponential_total_per_us;
  const double pick = boost::random::uniform_01<double>()(rng_) * model_.exponential_total_per_us;
  const std::uint32_t c = model_.exponential_classes[first_above(model_.exponential_cumulative, pick)];
  auto victim = boost::random::uniform_int_distribution<std::int64_t>(0, model_.classes[c].components - 1)(rng_);
  Micros when = exponential_clock_us_ >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(exponential_clock_us_));
  next_exponential_ = make_strike(when, c, victim);
}

void FaultTimeline::draw_next_trending(Trending& t) {
  const auto& info = model_.classes[t.fault_class];
  // Intensity r ((a + s) / a)^(b - 1) from the start: its integral to s is r a / b (((a + s) / a)^b - 1),
  // which the next event's cumulative hazard (one more Exp(1)) inverts.
  const double r = info.rate_per_us * static_cast<double>(info.components), a = info.trend_age_us, b = info.trend_shape;
  t.hazard += boost::random::exponential_distribution<double>(1.0)(rng_);
  const double s = a * (std::pow(1 + t.hazard * b / (r * a), 1 / b) - 1);
  const auto victim = boost::random::uniform_int_distribution<std::int64_t>(0, info.components - 1)(rng_);
  t.next = make_strike(!(s < 9.0e18) ? kNever : static_cast<Micros>(std::llround(s)), t.fault_class, victim);
}

void FaultTimeline::draw_next_lemon() {
  if (lemons_.empty()) {
    next_lemon_ = FaultStrike{};
    return;
  }
  const double total = model_.lemon_total_per_node_us * static_cast<double>(lemons_.size());
  lemon_clock_us_ += boost::random::exponential_distribution<double>(1.0)(lemon_rng_) / total;
  const auto lemon = boost::random::uniform_int_distribution<std::size_t>(0, lemons_.size() - 1)(lemon_rng_);
  const double pick = boost::random::uniform_01<double>()(lemon_rng_) * model_.lemon_total_per_node_us;
  const std::uint32_t c = model_.lemon_classes[first_above(model_.lemon_cumulative, pick)];
  FaultStrike strike;
  strike.time = lemon_clock_us_ >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(lemon_clock_us_));
  strike.fault_class = c;
  strike.node = lemons_[lemon];
  strike.gpu = model_.classes[c].per_gpu
                   ? boost::random::uniform_int_distribution<std::int32_t>(0, model_.gpus_per_node - 1)(lemon_rng_)
                   : -1;
  next_lemon_ = strike;
}

void FaultTimeline::draw_next_first_life(FirstLives& lives) {
  if (lives.survivors == 0) {
    lives.next = FaultStrike{};
    return;
  }
  const auto& info = model_.classes[lives.fault_class];
  // The earliest of m Weibull(k, scale) lives, given none has ended by the last first failure.
  lives.cumulative_hazard +=
      boost::random::exponential_distribution<double>(1.0)(rng_) / static_cast<double>(lives.survivors);
  const double k = info.weibull_shape;
  // New parts: H(t) = (t/scale)^k. An installed base: the residual lives' H(t) = -log Q(1/k, (t/scale)^k).
  // In double precision (Boost promotes to long double by default): faster, and the same on every platform.
  using DoublePolicy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  const double x = model_.stationary_start ? boost::math::gamma_q_inv(1.0 / k, std::exp(-lives.cumulative_hazard), DoublePolicy())
                                           : lives.cumulative_hazard;
  const double t = info.weibull_scale_us * std::pow(x, 1.0 / k);
  // By symmetry the victim is uniform among the parts still in their first life.
  std::int64_t victim = 0;
  do {
    victim = boost::random::uniform_int_distribution<std::int64_t>(0, info.components - 1)(rng_);
  } while (lives.failed[static_cast<std::size_t>(victim)]);
  lives.failed[static_cast<std::size_t>(victim)] = 1;
  --lives.survivors;
  lives.next = make_strike(t >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(t)), lives.fault_class, victim);
}

Micros FaultTimeline::draw_ttf_us(const FaultTimelineModel::ClassInfo& info) {
  const double ttf = info.distribution == Distribution::Lognormal
                         ? boost::random::lognormal_distribution<double>(info.lognormal_mu, info.lognormal_sigma)(rng_)
                         : boost::random::weibull_distribution<double>(info.weibull_shape, info.weibull_scale_us)(rng_);
  return ttf >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(ttf));
}

Micros FaultTimeline::draw_residual_us(const FaultTimelineModel::ClassInfo& info) {
  // A part found in service at a random moment sits in a length-biased life (lognormal(mu + sigma^2,
  // sigma)) at a uniform point of it.
  const double life = boost::random::lognormal_distribution<double>(info.lognormal_mu + info.lognormal_sigma * info.lognormal_sigma,
                                                                    info.lognormal_sigma)(rng_);
  const double residual = boost::random::uniform_01<double>()(rng_) * life;
  return residual >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(residual));
}

void FaultTimeline::choose_next() {
  // Ties go to the exponential stream, then first lives in class order, then renewed parts:
  // a fixed order, so every driver sees the same sequence.
  next_ = next_exponential_;
  next_source_ = next_.time == kNever ? Source::None : Source::Exponential;
  // The earliest first life, the lowest class on a tie (the order set keeps them so).
  if (!first_life_order_.empty() && first_life_order_.begin()->first < next_.time) {
    next_first_life_ = first_life_order_.begin()->second;
    next_ = first_lives_[next_first_life_].next;
    next_source_ = Source::FirstLife;
  }
  if (!trending_order_.empty() && trending_order_.begin()->first < next_.time) {
    next_trending_ = trending_order_.begin()->second;
    next_ = trending_[next_trending_].next;
    next_source_ = Source::Trending;
  }
  if (!renewed_.empty() && renewed_.top().time < next_.time) {
    const Clock& top = renewed_.top();
    next_ = make_strike(top.time, top.fault_class, top.component);
    next_source_ = Source::Renewed;
  }
  if (next_lemon_.time < next_.time) {
    next_ = next_lemon_;
    next_source_ = Source::Lemon;
  }
}

FaultStrike FaultTimeline::pop() {
  const FaultStrike out = next_;
  if (out.time == kNever) return out;
  std::uint32_t renew_class = 0;
  std::int64_t renew_component = -1;
  switch (next_source_) {
    case Source::Exponential: draw_next_exponential(); break;
    case Source::FirstLife: {
      FirstLives& lives = first_lives_[next_first_life_];
      renew_class = lives.fault_class;
      renew_component = (out.slot * (model_.classes[renew_class].per_gpu ? model_.gpus_per_node : 1)) + std::max(0, out.gpu);
      first_life_order_.erase({lives.next.time, next_first_life_});
      draw_next_first_life(lives);
      first_life_order_.insert({lives.next.time, next_first_life_});
      break;
    }
    case Source::Trending: {
      Trending& t = trending_[next_trending_];
      trending_order_.erase({t.next.time, next_trending_});
      draw_next_trending(t);
      trending_order_.insert({t.next.time, next_trending_});
      break;
    }
    case Source::Renewed:
      renew_class = renewed_.top().fault_class;
      renew_component = renewed_.top().component;
      renewed_.pop();
      break;
    case Source::Lemon: draw_next_lemon(); break;
    case Source::None: break;
  }
  if (renew_component >= 0) {
    // The replacement part starts its own life when it is back in service.
    const auto& info = model_.classes[renew_class];
    const Micros ttf = draw_ttf_us(info);
    const Micros back_in_service = out.time + info.renewal_delay_us;
    const Micros when = ttf == kNever || back_in_service > kNever - ttf ? kNever : back_in_service + ttf;
    if (when != kNever) renewed_.push({when, renew_class, renew_component});
  }
  choose_next();
  return out;
}

}  // namespace ctwin
