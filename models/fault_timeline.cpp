#include "models/fault_timeline.hpp"

#include <cmath>

#include <boost/math/special_functions/gamma.hpp>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <boost/random/weibull_distribution.hpp>

namespace ctwin {

FaultTimelineModel FaultTimelineModel::from(const Scenario& scenario) {
  FaultTimelineModel m;
  m.gpus_per_node = scenario.cluster.gpus_per_node;
  for (std::uint32_t i = 0; i < scenario.faults.size(); ++i) {
    const FaultClass& f = scenario.faults[i];
    ClassInfo info{};
    info.distribution = f.distribution;
    info.rate_per_us = f.rate.per_component_second / 1e6;
    info.weibull_shape = f.weibull_shape;
    info.per_gpu = f.rate.component == Component::Gpu;
    info.components = static_cast<std::int64_t>(scenario.job.nodes) * (info.per_gpu ? scenario.cluster.gpus_per_node : 1);
    info.renewal_delay_us = f.detection_us + f.diagnosis_us + f.action_us;
    if (info.rate_per_us > 0 && f.distribution == Distribution::Weibull)
      info.weibull_scale_us = (1.0 / info.rate_per_us) / boost::math::tgamma(1.0 + 1.0 / f.weibull_shape);
    m.classes.push_back(info);
    if (f.distribution == Distribution::Exponential && info.rate_per_us > 0) {
      m.exponential_total_per_us += info.rate_per_us * static_cast<double>(info.components);
      m.exponential_classes.push_back(i);
      m.exponential_cumulative.push_back(m.exponential_total_per_us);
    }
  }
  return m;
}

FaultTimeline::FaultTimeline(const FaultTimelineModel& model, std::uint64_t seed) : model_(model), rng_(seed) {
  draw_next_exponential();
  for (std::uint32_t c = 0; c < model_.classes.size(); ++c) {
    const auto& info = model_.classes[c];
    if (info.distribution != Distribution::Weibull || info.rate_per_us <= 0) continue;
    for (std::int64_t component = 0; component < info.components; ++component)
      weibull_clocks_.push({draw_weibull_us(info), c, component});
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
  double pick = boost::random::uniform_01<double>()(rng_) * model_.exponential_total_per_us;
  std::size_t k = 0;
  while (k + 1 < model_.exponential_cumulative.size() && pick >= model_.exponential_cumulative[k]) ++k;
  std::uint32_t c = model_.exponential_classes[k];
  auto victim = boost::random::uniform_int_distribution<std::int64_t>(0, model_.classes[c].components - 1)(rng_);
  Micros when = exponential_clock_us_ >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(exponential_clock_us_));
  next_exponential_ = make_strike(when, c, victim);
}

Micros FaultTimeline::draw_weibull_us(const FaultTimelineModel::ClassInfo& info) {
  double ttf = boost::random::weibull_distribution<double>(info.weibull_shape, info.weibull_scale_us)(rng_);
  return ttf >= 9.0e18 ? kNever : static_cast<Micros>(std::llround(ttf));
}

void FaultTimeline::choose_next() {
  // Ties go to the exponential stream, then to the lower class and component: fixed, so reproducible.
  if (!weibull_clocks_.empty() && weibull_clocks_.top().time < next_exponential_.time) {
    const Clock& top = weibull_clocks_.top();
    next_ = make_strike(top.time, top.fault_class, top.component);
  } else {
    next_ = next_exponential_;
  }
}

FaultStrike FaultTimeline::pop() {
  FaultStrike out = next_;
  if (out.time == kNever) return out;
  if (!weibull_clocks_.empty() && weibull_clocks_.top().time < next_exponential_.time) {
    Clock clock = weibull_clocks_.top();
    weibull_clocks_.pop();
    const auto& info = model_.classes[clock.fault_class];
    Micros ttf = draw_weibull_us(info);
    Micros back_in_service = clock.time + info.renewal_delay_us;
    clock.time = ttf == kNever || back_in_service > kNever - ttf ? kNever : back_in_service + ttf;
    weibull_clocks_.push(clock);
  } else {
    draw_next_exponential();
  }
  choose_next();
  return out;
}

}  // namespace ctwin
