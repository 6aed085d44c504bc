// The pipeline schedules real runs use (1F1B, Megatron's interleaving, Llama 3's flexible
// interleaving, zero-bubble ZB-H1 and ZB-V, DeepSeek's DualPipe), each with its bubble and the
// activations it holds; activation offload; and a refusal that names the cheapest change that fits.
#include <catch2/catch.hpp>

#include "models/memory.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/workload.hpp"
#include "sim/step_model.hpp"
#include "support/step_fixtures.hpp"

using namespace ctwin;
using namespace ctwin::test;

namespace {

//! Llama 3 405B on its 16 stages (one layer fewer on the first and last), 16 micro-batches a step.
Workload llama405b_16_stages(PipelineSchedule s, int virtual_stages = 1, int contiguous = 0) {
  Workload w = llama405b();
  w.layout.stage_layers.assign(16, 8);
  w.layout.stage_layers.front() = w.layout.stage_layers.back() = 7;
  w.layout.sequence_parallel = true;
  w.layout.schedule = s;
  w.layout.virtual_stages = virtual_stages;
  w.layout.contiguous_micro_batches = contiguous;
  return w;
}

double step_s(const Workload& w) { return assemble_step(w, Collectives{}, 1.0, 600).step_s; }
double bubble_s(const Workload& w) { return assemble_step(w, Collectives{}, 1.0, 600).bubble_s; }

}  // namespace

TEST_CASE("each schedule's bubble as a share of 1F1B's", "[step][schedule]") {
  ParallelLayout p;
  p.pp = 16;
  CHECK(bubble_factor(p, 16) == 1);
  p.virtual_stages = 4;  // 1F1B over chunks is Megatron's interleaving
  CHECK(bubble_factor(p, 16) == Approx(0.25));
  p.schedule = PipelineSchedule::FlexibleInterleaved;
  p.contiguous_micro_batches = 16;  // N = p: Megatron's
  CHECK(bubble_factor(p, 16) == Approx(0.25));
  p.contiguous_micro_batches = 4;  // fewer contiguous: idle chunk-steps at each chunk change
  CHECK(bubble_factor(p, 16) == Approx((15 + 3 * 12) / (4.0 * 15)));
  p.virtual_stages = 1;
  p.contiguous_micro_batches = 0;
  p.schedule = PipelineSchedule::ZeroBubbleH1;  // W fills the drain: 1 - 2W/t with W = t/3
  CHECK(bubble_factor(p, 16) == Approx(1.0 / 3));
  p.schedule = PipelineSchedule::ZeroBubbleV;  // F = B = W: none
  CHECK(bubble_factor(p, 16) == Approx(0));
  p.recompute = Recompute::Full;  // W a quarter of t: ZB-V leaves a quarter
  CHECK(bubble_factor(p, 16) == Approx(0.25));
  p.recompute = Recompute::None;
  p.schedule = PipelineSchedule::DualPipe;  // (p/2 - 1)(F&B + B - 3W) / (p - 1) t, F = W = t/3, B = 2t/3
  CHECK(bubble_factor(p, 16) == Approx(7 * (1.0 / 3 + 4.0 / 3 - 1) / 15));
}

TEST_CASE("each schedule's memory: micro-batches in flight and parameter copies", "[step][schedule][memory]") {
  ParallelLayout p;
  p.pp = 16;
  CHECK(micro_batches_in_flight(p, 32, 0) == 16);
  CHECK(micro_batches_in_flight(p, 32, 15) == 1);
  p.schedule = PipelineSchedule::ZeroBubbleV;
  CHECK(micro_batches_in_flight(p, 32, 0) == 16);  // ZB-V keeps 1F1B's peak
  p.schedule = PipelineSchedule::DualPipe;
  CHECK(micro_batches_in_flight(p, 32, 0) == 17);
  CHECK(parameter_copies(p) == 2);
  p.schedule = PipelineSchedule::FlexibleInterleaved;
  p.virtual_stages = 4;
  p.contiguous_micro_batches = 16;  // Megatron's warm-up: 2(p - 1) + (v - 1)p + 1 chunks of a quarter
  CHECK(micro_batches_in_flight(p, 32, 0) == Approx((30 + 48 + 1) / 4.0));
  p.contiguous_micro_batches = 2;  // fewer contiguous micro-batches hold less
  CHECK(micro_batches_in_flight(p, 32, 0) == Approx((30 + 6 + 1) / 4.0));
  CHECK(parameter_copies(p) == 1);
  // Megatron's interleaving holds its warm-up too, and never more than every micro-batch: with as
  // many micro-batches as stages, all of them (Korthikanti's closed form, 16 + 15/4, leaves the cap out).
  p.schedule = PipelineSchedule::Interleaved;
  p.contiguous_micro_batches = 0;
  CHECK(micro_batches_in_flight(p, 64, 0) == Approx((30 + 48 + 1) / 4.0));
  CHECK(micro_batches_in_flight(p, 16, 0) == Approx(16));
  CHECK(micro_batches_in_flight(p, 16, 15) == Approx((0 + 48 + 1) / 4.0));
}

TEST_CASE("Llama 3 405B on 16 stages: the schedule moves the step by its bubble alone", "[step][schedule]") {
  const Workload one = llama405b_16_stages(PipelineSchedule::OneFOneB);
  const Workload zbh1 = llama405b_16_stages(PipelineSchedule::ZeroBubbleH1);
  const Workload zbv = llama405b_16_stages(PipelineSchedule::ZeroBubbleV);
  const Workload inter = llama405b_16_stages(PipelineSchedule::Interleaved, 4);
  const Workload flex = llama405b_16_stages(PipelineSchedule::FlexibleInterleaved, 4, 4);
  REQUIRE(check_layout(one, 8).empty());
  REQUIRE(check_layout(flex, 8).empty());
  CHECK(bubble_s(zbh1) == Approx(bubble_s(one) / 3));
  CHECK(bubble_s(zbv) == Approx(0).margin(1e-12));
  CHECK(bubble_s(inter) == Approx(bubble_s(one) / 4));
  CHECK(bubble_s(flex) > bubble_s(inter));
  CHECK(bubble_s(flex) < bubble_s(one));
  CHECK(step_s(zbv) < step_s(zbh1));
  CHECK(step_s(zbh1) < step_s(one));
  // The activations: the flexible schedule with N = 4 holds less than Megatron's interleaving.
  CHECK(memory_per_gpu(flex).activations < memory_per_gpu(inter).activations);
  CHECK(memory_per_gpu(zbv).activations == Approx(memory_per_gpu(one).activations));
  // DualPipe: two copies of the parameters and p + 1 micro-batches in flight.
  const Workload dual = llama405b_16_stages(PipelineSchedule::DualPipe);
  REQUIRE(check_layout(dual, 8).empty());
  CHECK(memory_per_gpu(dual).weights == Approx(2 * memory_per_gpu(one).weights));
  CHECK(memory_per_gpu(dual).activations > memory_per_gpu(one).activations);
}

TEST_CASE("a schedule the layout cannot run is refused with its reason", "[step][schedule]") {
  Workload w = llama405b_16_stages(PipelineSchedule::DualPipe);
  w.layout.pp = 15;
  w.layout.stage_layers.clear();
  CHECK(check_schedule(w.layout, 16).find("pp must be even") != std::string::npos);
  w = llama405b_16_stages(PipelineSchedule::ZeroBubbleV, 4);
  CHECK(check_layout(w, 8).find("two chunks a stage") != std::string::npos);
  w = llama405b_16_stages(PipelineSchedule::FlexibleInterleaved, 1);
  CHECK(check_layout(w, 8).find("virtual_stages of 2 or more") != std::string::npos);
  w = llama405b_16_stages(PipelineSchedule::OneFOneB, 1, 4);
  CHECK(check_layout(w, 8).find("contiguous_micro_batches") != std::string::npos);
  w = llama405b_16_stages(PipelineSchedule::DualPipe);
  w.layout.global_batch = 16;  // 8 micro-batches on 16 stages
  CHECK(check_layout(w, 8).find("at least pp micro-batches") != std::string::npos);
}

TEST_CASE("activation offload frees the held activations and costs only what outlasts the passes", "[step][schedule][memory]") {
  Workload w = llama405b_16_stages(PipelineSchedule::Interleaved, 4);
  const MemoryUse kept = memory_per_gpu(w);
  w.layout.activation_offload = 1;
  const MemoryUse moved = memory_per_gpu(w);
  CHECK(moved.activations < kept.activations / 5);  // one micro-batch's chunk of ~ten on the GPU
  CHECK(moved.weights == kept.weights);
  // At 50 GB/s a micro-batch's activations leave during its forward: nothing exposed.
  const StepBreakdown fast = assemble_step(w, Collectives{}, 1.0, 600);
  CHECK(fast.offload_exposed_s == 0);
  // At 1 GB/s they cannot: the wait is exposed and the step grows by it.
  w.host_bandwidth = 1e9;
  const StepBreakdown slow = assemble_step(w, Collectives{}, 1.0, 600);
  CHECK(slow.offload_exposed_s > 1);
  CHECK(slow.step_s == Approx(fast.step_s + slow.offload_exposed_s));
}

TEST_CASE("a layout that does not fit names the cheapest change that does", "[step][schedule][memory]") {
  Workload w = llama405b_16_stages(PipelineSchedule::Interleaved, 2);
  w.layout.dp = 128;  // Table 4's: the optimizer states sharded 128 ways
  w.layout.global_batch = 4096;  // 32 micro-batches: interleaving's warm-up holds 22.5 of them
  const double capacity = 80.0 * (1 << 30);
  REQUIRE_FALSE(check_memory(w, capacity).empty());
  const std::string fix = cheapest_fit(w, capacity, 8);
  REQUIRE_FALSE(fix.empty());
  INFO(fix);
  // ZB-V: no bubble in 1F1B's memory, cheaper than any recomputation or interleaving that fits.
  CHECK(fix.rfind("schedule zb_v", 0) == 0);
  CHECK(fix.find("collectives aside: -") != std::string::npos);
  // Nothing fits in 1 GiB: none named.
  CHECK(cheapest_fit(w, 1.0 * (1 << 30), 8).empty());
}
