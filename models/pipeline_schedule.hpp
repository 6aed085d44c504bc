#pragma once
//! Pipeline schedules: how much of the fill and drain each leaves idle (the bubble) and how many
//! micro-batches' activations a stage holds at its peak. Engine-neutral arithmetic; the step model
//! (sim/step_model) prices the bubble, the memory model (models/memory) the activations.
//!
//! With t a stage's time for one micro-batch (forward F, the backward's input gradients B, its
//! weight gradients W, and a recomputed forward R) and p stages:
//!  - 1F1B (PipeDream-Flush; Narayanan et al., SC'21): bubble (p - 1) t; stage i holds p - i.
//!  - Megatron's interleaved 1F1B over v chunks a stage: (p - 1) t / v; stage i holds its warm-up,
//!    2(p - 1 - i) + (v - 1) p + 1 chunks of 1/v of the stage, at most all m v of them.
//!  - Llama 3's flexible interleaving (§3.3.2): rounds of N contiguous micro-batches instead of p.
//!    Our reading [A]: N < p leaves (p - N) chunk-steps idle at each of the v - 1 chunk changes of
//!    the fill and of the drain, so the bubble is ((p - 1) + (v - 1)(p - N)) t / v, and the warm-up
//!    holds 2(p - 1 - i) + (v - 1) N + 1 chunks: N = p is Megatron's, N = 1 1F1B's memory.
//!  - ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24, arXiv 2401.10241): the weight
//!    gradients fill the drain, (p - 1)(t - 2W), with 1F1B's memory.
//!  - ZB-V: two chunks a stage in a V, (p - 1) max(0, t - 3W), 1F1B's memory.
//!  - DualPipe (DeepSeek-V3, arXiv 2412.19437, Table 2): (p/2 - 1)(F&B + B - 3W) with F&B = F + B (a
//!    forward and a backward chunk side by side), every stage holding p + 1 micro-batches and two
//!    copies of its parameters; its point is to hide the expert all-to-alls behind the paired chunk.
//! W is taken as a third of a stage's time without recomputation (the weight gradients as many
//! FLOPs as the forward), a quarter with full recomputation (a forward again in the backward).

#include <optional>
#include <string_view>

#include "models/workload.hpp"

namespace ctwin {

const char* to_string(PipelineSchedule s);
std::optional<PipelineSchedule> pipeline_schedule_named(std::string_view name);

//! The bubble as a share of 1F1B's: the idle time is (p - 1) t times this (uniform stages).
double bubble_factor(const ParallelLayout& p, int micro_batches);

//! Micro-batches' worth of stage `stage`'s activations it holds at its peak (one a micro-batch of
//! the whole stage), given `micro_batches` per step.
double micro_batches_in_flight(const ParallelLayout& p, int micro_batches, int stage);

//! Copies of a stage's parameters (and their gradients and optimizer states) each GPU holds.
int parameter_copies(const ParallelLayout& p);

//! Model chunks a stage holds under the schedule (interleaved: virtual_stages; ZB-V, DualPipe: 2).
int chunks_per_stage(const ParallelLayout& p);

//! DualPipe: each forward chunk beside a backward one, the expert all-to-alls hidden behind the other.
inline bool schedule_hides_all_to_alls(const ParallelLayout& p) { return p.schedule == PipelineSchedule::DualPipe && p.pp > 1; }

//! "" when the schedule can run this layout; else why not.
std::string check_schedule(const ParallelLayout& p, int micro_batches);

}  // namespace ctwin
