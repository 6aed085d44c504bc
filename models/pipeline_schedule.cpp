#include "models/pipeline_schedule.hpp"

#include <algorithm>

namespace ctwin {

namespace {

//! The schedule that runs: 1F1B over more than one chunk is Megatron's interleaving.
PipelineSchedule schedule_of(const ParallelLayout& p) {
  return p.schedule == PipelineSchedule::OneFOneB && p.virtual_stages > 1 ? PipelineSchedule::Interleaved : p.schedule;
}

//! W over t: the weight gradients' share of a stage's time for a micro-batch.
double weight_share(const ParallelLayout& p) { return p.recompute == Recompute::Full ? 0.25 : 1.0 / 3; }

}  // namespace

const char* to_string(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::OneFOneB: return "1f1b";
    case PipelineSchedule::Interleaved: return "interleaved";
    case PipelineSchedule::FlexibleInterleaved: return "flexible_interleaved";
    case PipelineSchedule::ZeroBubbleH1: return "zb_h1";
    case PipelineSchedule::ZeroBubbleV: return "zb_v";
    case PipelineSchedule::DualPipe: return "dualpipe";
  }
  return "?";
}

std::optional<PipelineSchedule> pipeline_schedule_named(std::string_view name) {
  for (const PipelineSchedule s : {PipelineSchedule::OneFOneB, PipelineSchedule::Interleaved, PipelineSchedule::FlexibleInterleaved,
                                   PipelineSchedule::ZeroBubbleH1, PipelineSchedule::ZeroBubbleV, PipelineSchedule::DualPipe})
    if (name == to_string(s)) return s;
  return std::nullopt;
}

int chunks_per_stage(const ParallelLayout& p) {
  switch (schedule_of(p)) {
    case PipelineSchedule::Interleaved:
    case PipelineSchedule::FlexibleInterleaved: return std::max(1, p.virtual_stages);
    case PipelineSchedule::ZeroBubbleV:
    case PipelineSchedule::DualPipe: return 2;
    default: return 1;
  }
}

double bubble_factor(const ParallelLayout& p, int micro_batches) {
  (void)micro_batches;
  const double pp = p.pp, v = chunks_per_stage(p), w = weight_share(p);
  if (p.pp <= 1) return 0;
  switch (schedule_of(p)) {
    case PipelineSchedule::OneFOneB: return 1;
    case PipelineSchedule::Interleaved: return 1 / v;
    case PipelineSchedule::FlexibleInterleaved: {
      const double n = p.contiguous_micro_batches > 0 ? p.contiguous_micro_batches : pp;
      return ((pp - 1) + (v - 1) * std::max(0.0, pp - n)) / (v * (pp - 1));
    }
    case PipelineSchedule::ZeroBubbleH1: return 1 - 2 * w;
    case PipelineSchedule::ZeroBubbleV: return std::max(0.0, 1 - 3 * w);
    case PipelineSchedule::DualPipe: {
      // (p/2 - 1)(F&B + B - 3W) over (p - 1) t, with F&B = F + B and B the whole backward (t - F).
      const double f = p.recompute == Recompute::Full ? 0.25 : 1.0 / 3, backward = 1 - f;
      return std::max(0.0, (pp / 2 - 1) * (f + 2 * backward - 3 * w) / (pp - 1));
    }
  }
  return 1;
}

double micro_batches_in_flight(const ParallelLayout& p, int micro_batches, int stage) {
  const double m = micro_batches, pp = p.pp, i = stage, v = chunks_per_stage(p);
  switch (schedule_of(p)) {
    case PipelineSchedule::Interleaved:
    case PipelineSchedule::FlexibleInterleaved: {
      // Megatron's warm-up (schedules.py: (pp - rank - 1) x 2 + (v - 1) x N forwards, and the first
      // of the steady state), capped at every chunk of every micro-batch: with m = pp a stage holds
      // at most all m, not Korthikanti's pp (1 + (pp - 1)/(pp v)), which leaves the cap out.
      const double n = p.schedule == PipelineSchedule::FlexibleInterleaved && p.contiguous_micro_batches > 0 ? p.contiguous_micro_batches : pp;
      return std::min(m * v, 2 * (pp - 1 - i) + (v - 1) * n + 1) / v;  // chunks of 1/v of the stage each
    }
    case PipelineSchedule::DualPipe: return std::min(m, pp + 1);
    default: return std::min(m, pp - i);
  }
}

int parameter_copies(const ParallelLayout& p) { return schedule_of(p) == PipelineSchedule::DualPipe ? 2 : 1; }

std::string check_schedule(const ParallelLayout& p, int micro_batches) {
  const PipelineSchedule s = schedule_of(p);
  if (p.pp <= 1 && s != PipelineSchedule::OneFOneB) return std::string("schedule ") + to_string(s) + " needs a pipeline (pp > 1)";
  if ((s == PipelineSchedule::ZeroBubbleV || s == PipelineSchedule::DualPipe) && p.virtual_stages > 2)
    return std::string("schedule ") + to_string(s) + " runs two chunks a stage: virtual_stages must be 1 or 2";
  if (s == PipelineSchedule::FlexibleInterleaved && p.virtual_stages < 2) return "flexible_interleaved needs virtual_stages of 2 or more";
  if (p.contiguous_micro_batches > 0 && s != PipelineSchedule::FlexibleInterleaved)
    return "contiguous_micro_batches is flexible_interleaved's (Llama 3's N)";
  if (s == PipelineSchedule::DualPipe && p.pp % 2 != 0) return "dualpipe feeds the pipeline from both ends: pp must be even";
  if (s == PipelineSchedule::DualPipe && micro_batches < p.pp) return "dualpipe needs at least pp micro-batches a step";
  return "";
}

}  // namespace ctwin
