#include "live/job/job_master.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <random>
#include <set>

#include "core/invariant.hpp"
#include "core/wall_clock.hpp"
#include "live/job/restore_step.hpp"
#include "live/job/recovery.hpp"
#include "policies/fault_classes.hpp"
#include "policies/restart_path.hpp"

namespace ctwin::live {

namespace {

using Clock = JobMaster::Clock;

}  // namespace

JobMaster::JobMaster(const Scenario& scenario, const control::Controller& controller, MasterOptions options, Clock::time_point now)
    : scenario_(scenario),
      controller_(controller),
      o_(std::move(options)),
      ledger_(now),
      log_(o_.events_path),
      book_(ledger_, [this](Micros at, EventKind kind, const std::string& note, double speed) { record(at, kind, note, 0, -1, {}, speed); }) {
  assert(o_.nnodes >= 1 && o_.nproc_per_node >= 1);
  slots_.assign(static_cast<std::size_t>(o_.nnodes), "");
  interval_policy_ = make_checkpoint_policy(scenario_.checkpoint_policy, implied_job_mtbf_s(scenario_));
  // Without elastic shrinking the job is one replica: it waits for spares.
  replica_nodes_ = scenario_.elastic.shrink ? std::clamp(scenario_.elastic.replica_nodes, 1, o_.nnodes) : o_.nnodes;
  if (o_.nnodes % replica_nodes_ != 0)
    throw BadInput("policies.elastic.replica_nodes (" + std::to_string(replica_nodes_) + ") does not divide --nnodes " + std::to_string(o_.nnodes));
  active_replicas_ = total_replicas_ = o_.nnodes / replica_nodes_;
  precheck_wanted_ = scenario_.precheck.enabled && o_.precheck_across_nodes && o_.prechecks;  // before the first start
  if (o_.forecast) forecaster_.emplace(*o_.forecast);
  start_utc_us_ = utc_now_us();
  {  // a run id no other run of this job shares: the start time and 32 random bits
    std::random_device entropy;
    char id[40];
    std::snprintf(id, sizeof id, "%llx-%08x", static_cast<unsigned long long>(start_utc_us_), static_cast<unsigned>(entropy()));
    run_id_ = id;
    incarnation_ = static_cast<std::int64_t>(((std::uint64_t{entropy()} << 32) | entropy()) >> 2) | 1;  // 1 .. 2^62 - 1
  }
  read_journal(now);
  // nodes=: the whole job's log (validate compares it with the scenario's job, not with one node).
  if (!resumed_)  // a job of one's start row names its node, as the node's own log did
    record(0, EventKind::Start, "utc=" + utc_text(start_utc_us_) + " host=" + o_.host + " job=" + o_.job + " nodes=" + std::to_string(o_.nnodes),
           o_.log_node >= 0 ? 0 : -1);
  write_journal(now);
}

// --- agents ------------------------------------------------------------------------------------

JoinReply JobMaster::join(const JoinRequest& request, Clock::time_point now) {
  auto [it, added] = agents_.try_emplace(request.agent);
  Agent& a = it->second;
  a.last_seen = now;
  if (added) {
    a.id = request.agent;
    a.host = request.host;
    a.address = request.address.empty() ? request.host : request.address;
    a.node_id = request.node_id;
    // The rank it asks for (its Slurm node id, its pod ordinal) when free, else the first free one.
    const auto wanted = static_cast<std::size_t>(request.node_id);
    int rank = -1;
    // A rank left vacant by a fault is filled at the decision (fill_vacancies), after the fault's rows.
    const bool may_take_a_rank = phase_ == Phase::Rendezvous || (phase_ == Phase::Gathering && decided_);
    // A node whose agent started again (the same node id, and the run it served) takes its rank
    // back at once, rather than wait as a spare for the agent timeout to free it.
    Agent* held = request.node_id >= 0 && wanted < static_cast<std::size_t>(width()) && !slots_[wanted].empty() ? &agents_.at(slots_[wanted]) : nullptr;
    if (!request.spare && held && held->node_id == request.node_id && !request.run.empty() && request.run == o_.job + "/" + run_id_) {
      reclaim(*held, a, now);
    } else if (!request.spare && may_take_a_rank) {
      if (request.node_id >= 0 && wanted < static_cast<std::size_t>(width()) && slots_[wanted].empty()) rank = static_cast<int>(wanted);
      for (std::size_t r = 0; rank < 0 && r < static_cast<std::size_t>(width()); ++r)
        if (slots_[r].empty()) rank = static_cast<int>(r);
    }
    if (rank >= 0) {
      slots_[static_cast<std::size_t>(rank)] = a.id;
      a.rank = rank;
      if (phase_ != Phase::Rendezvous) record(ledger_.at(now), EventKind::SpareAssigned, "host=" + a.host + " joined", rank);
    }
    std::cerr << "ctwin master: " << a.host << " joined as " << (a.rank >= 0 ? "node rank " + std::to_string(a.rank) : std::string("a spare"))
              << "\n";
    journal_dirty_ = true;
  }
  if (phase_ == Phase::Rendezvous && vacancies() == 0) {
    ledger_.charge(Category::Restart, now);  // the job's start: waiting for every node
    record(ledger_.at(now), EventKind::Health, "rendezvous complete: " + std::to_string(o_.nnodes) + " nodes");
    begin_gathering(now);
  }
  return {o_.job, a.rank, o_.report_interval_s, incarnation_};
}

Plan JobMaster::report(const Report& report, Clock::time_point now) {
  const auto it = agents_.find(report.agent);
  if (it == agents_.end()) throw UnknownAgent("unknown agent " + report.agent + ": join first");
  Agent& a = it->second;
  a.last_seen = now;
  a.status = report.status;
  if (report.status.launched && report.status.state != NodeState::Stopped) {
    if (a.launched_generation != report.status.generation && report.status.generation == generation_) ++launches_said_;
    a.launched_generation = report.status.generation, a.launched = *report.status.launched;
  }
  if (!report.status.problem.empty()) {  // a node that cannot take part (another run's steps)
    std::cerr << "ctwin master: " << a.host << ": " << report.status.problem << "\n";
    if (a.rank >= 0) finish(2, "node rank " + std::to_string(a.rank) + " on " + a.host + ": " + report.status.problem, now);
    else a.evicted = true, journal_dirty_ = true;  // a spare that cannot serve this run is not one
    return plan_for(a);
  }
  // When the report left the agent: a fault's and a line's ages count from there, not from now.
  const Clock::time_point left = report.sent_us ? now - a.delivery.excess(*report.sent_us, now) : now;
  if (a.rank == 0) take_lines(report, left, now);
  if (!report.sections.empty()) {
    a.sections = report.sections;
    a.sections_at = now;
    a.sections_generation = report.status.generation;
  }
  if (report.precheck) take_precheck_result(a, *report.precheck, now);
  for (const auto& r : report.storage) take_storage(a, r, left);
  for (const auto& e : report.events) take_event(a, e, left);
  if (report.fault && a.rank >= 0 && !a.evicted) take_fault(a, report, left, now);
  status_changed(a, now);
  check_launches(now);
  return plan_for(a);
}

void JobMaster::status_changed(const Agent& a, Clock::time_point now) {
  if (phase_ == Phase::Running && a.status.state == NodeState::Finished) {  // the others' states only matter then
    bool all_finished = true;
    for (int r = 0; r < width(); ++r) {
      const std::string& id = slots_[static_cast<std::size_t>(r)];
      const Agent* held = id.empty() ? nullptr : &agents_.at(id);
      all_finished &= held && held->status.state == NodeState::Finished && held->status.generation == generation_;
    }
    if (all_finished) finish(0, "every node finished at step " + std::to_string(book_.step()), now);
  }
  if (phase_ == Phase::Gathering) try_to_run(now);
}

std::optional<HeartbeatAnswer> JobMaster::heartbeat(const Heartbeat& h, Clock::time_point now) {
  const auto it = agents_.find(h.agent);
  if (it == agents_.end()) return HeartbeatAnswer{h.agent, h.seq, true, 0, PlanKind::Wait};
  Agent& a = it->second;
  // Sent to an earlier master (a capture replayed after this one started, whose SEQ it has not
  // seen): no sign of life. The answer sends the agent for its plan, which names this incarnation.
  if (h.incarnation != incarnation_) {
    const Plan p = plan_for(a);
    return HeartbeatAnswer{h.agent, h.seq, false, p.generation, p.what};
  }
  if (h.seq <= a.seq) return std::nullopt;  // replayed, or overtaken by a newer one
  a.seq = h.seq;
  a.last_seen = now;
  // Running and finished carry nothing but the step; a stop comes by HTTP, with the steps it holds.
  // A datagram sent before a report may arrive after it: it never takes a node back to an older
  // generation (a node held `running` at the old one would hold the gathering for good).
  if (h.generation < a.status.generation) {
  } else if (h.state == NodeState::Running || h.state == NodeState::Finished) {
    const bool changed = h.state != a.status.state || h.generation != a.status.generation;
    a.status = {h.generation, h.state, h.step, std::nullopt};
    if (changed) status_changed(a, now);
  } else if (h.generation == a.status.generation && h.state == a.status.state) {
    a.status.step = h.step;
  }
  const Plan p = plan_for(a);
  // What the node says and what the master holds of it differ: its next report goes by HTTP.
  const bool out_of_date = h.generation != a.status.generation || h.state != a.status.state;
  if (!out_of_date && p.generation == h.known_generation && p.what == h.known_plan && p.cadence.revision == h.known_cadence) return std::nullopt;
  return HeartbeatAnswer{h.agent, h.seq, false, p.generation, p.what};
}

//! Node rank 0's trainer speaks for the job's progress (its ledger), as a node's rank 0 does for the node.
//! Lines that arrive after a fault was reported count when they were said before it.
void JobMaster::take_lines(const Report& report, Clock::time_point left, Clock::time_point now) {
  const bool running = phase_ == Phase::Running && report.status.generation == generation_;
  const bool before_the_decision = phase_ == Phase::Gathering && !decided_ && generation_ > 1;
  if (!running && !before_the_decision) return;
  Clock::time_point until = now;
  if (before_the_decision)
    for (const auto& f : faults_)
      if (f.generation == generation_ - 1) until = std::min(until, f.at);
  for (const auto& line : report.lines) {
    const TrainerMessage m = parse_trainer_message(line.line);
    if (m.kind == TrainerMessage::Kind::Unknown || m.rank != 0) continue;
    // When it was said: its age before the report left, kept in order and never after now.
    const Clock::time_point at = std::min(std::max(left - steady_seconds(line.age_s), last_line_at_), now);
    if (at > until) break;
    last_line_at_ = at;
    // What a restart costs: from the stop to this generation's first step (the job's start, at first).
    if (m.kind == TrainerMessage::Kind::Step && timed_generation_ != generation_) {
      timed_generation_ = generation_;
      last_restart_s_ = seconds_between(gathering_since_, at);
    }
    book_.apply(m, at);
    if (m.kind == TrainerMessage::Kind::Checkpoint && grow_by_ > 0 && running) {  // the planned stop, at a checkpoint
      record(ledger_.at(at), EventKind::Health, "the job grows by " + std::to_string(grow_by_) + " replicas at this checkpoint");
      cause_ = "regrow";
      begin_gathering(now);
      return;
    }
    journal_dirty_ = true;
  }
}

void JobMaster::tick(Clock::time_point now) {
  discount_own_stall(now);
  // Silence is looked for 4 times a second: a quarter second on a timeout of seconds, and a pass
  // over 10,000 agents at every tick (20 a second) would cost more than their heartbeats.
  if (phase_ != Phase::Done && now - silence_checked_ >= std::chrono::milliseconds(250)) {
    silence_checked_ = now;
    std::vector<std::string> silent;
    std::size_t heard = 0;
    for (const auto& [id, a] : agents_) {
      if (a.evicted) continue;
      if (seconds_between(a.last_seen, now) > o_.agent_timeout_s) silent.push_back(id);
      else ++heard;
    }
    if (!silent.empty() && heard == 0) {  // every agent at once: the master's network (or the master) is the likelier fault
      if (!all_silent_since_) {
        all_silent_since_ = now;
        const std::string why = "every agent (" + std::to_string(silent.size()) + ") is silent at once: the master's network or the master itself "
                                "is the likelier fault; no node is declared lost, the master waits for them";
        std::cerr << "ctwin master: " << why << "\n";
        record(ledger_.marked(), EventKind::Health, why);
      }
      silent.clear();
    } else if (heard > 0) {
      all_silent_since_.reset();
    }
    for (const auto& id : silent) {
      Agent& a = agents_.at(id);
      if (a.rank >= 0) lose(a, "silent for " + std::to_string(static_cast<long>(seconds_between(a.last_seen, now))) + " s", now);
      else agents_.erase(id);  // a silent spare is simply gone
      journal_dirty_ = true;
    }
  }
  if (phase_ == Phase::Gathering) try_to_run(now);
  update_cadence(now);
  update_forecast(now);
  look_for_stragglers(now);
  consider_growing(now);
  log_.flush();
  if (journal_dirty_ && now - journal_written_ > std::chrono::milliseconds(200)) write_journal(now);
}

//! A master that did not run (stopped, a paused VM, starved of CPU) heard nobody meanwhile: that
//! time is not its agents' silence. Ticks come every 50 ms while it serves.
void JobMaster::discount_own_stall(Clock::time_point now) {
  const Clock::time_point last = last_tick_;
  last_tick_ = now;
  if (!std::isfinite(o_.agent_timeout_s)) return;  // no agent is ever declared silent: nothing to discount
  if (last == Clock::time_point{} || now - last <= steady_seconds(o_.own_stall_s)) return;
  const Clock::duration gap = now - last;
  for (auto& [id, a] : agents_) a.last_seen = std::min(now, a.last_seen + gap);
  char why[160];
  std::snprintf(why, sizeof why, "the master did not run for %.1f s (stopped, paused or starved): its agents' silence is counted without it",
                seconds_between(last, now));
  std::cerr << "ctwin master: " << why << "\n";
  record(ledger_.marked(), EventKind::Health, why);
}

//! An agent that went silent lost its node: a node fault while the job runs; its rank is vacant.
void JobMaster::lose(Agent& a, const std::string& why, Clock::time_point now) {
  const int rank = a.rank;
  std::cerr << "ctwin master: node rank " << rank << " (" << a.host << ") lost: " << why << "\n";
  const LiveFaultClass lost = classify_stop(scenario_, LiveStop::NodeLost);
  FaultReport fault{lost, "agent " + why + " host=" + a.host, -1, -1, 0};
  const Clock::time_point at = a.last_seen;
  // Lost while the job gathers after another fault: the node died then too (its trainer's peers
  // failing first is what made the others stop), so it belongs to the generation that ended.
  const std::int64_t generation = phase_ == Phase::Gathering && generation_ > 1 ? generation_ - 1 : generation_;
  faults_.push_back({rank, generation, fault, at, a.id, now, true});
  slots_[static_cast<std::size_t>(rank)].clear();
  a.left_rank = a.rank, a.rank = -1;
  a.evicted = true;
  if (phase_ == Phase::Running) on_fault(rank, fault, now);
  journal_dirty_ = true;
}

void JobMaster::reclaim(Agent& old, Agent& back, Clock::time_point now) {
  const int rank = old.rank;
  std::cerr << "ctwin master: node rank " << rank << " (" << back.host << ") came back with a new agent: it takes its rank again\n";
  old.left_rank = old.rank, old.rank = -1;
  old.evicted = true;
  slots_[static_cast<std::size_t>(rank)] = back.id;
  back.rank = rank;
  journal_dirty_ = true;
  if (phase_ == Phase::Rendezvous) return;
  const LiveFaultClass lost = classify_stop(scenario_, LiveStop::NodeLost);
  const FaultReport fault{lost, "the agent on host=" + back.host + " started again: its trainer went with the old one", -1, -1, 0};
  const std::int64_t generation = phase_ == Phase::Gathering && generation_ > 1 ? generation_ - 1 : generation_;
  faults_.push_back({rank, generation, fault, std::min(old.last_seen, now), old.id, now, true});
  record(ledger_.at(now), EventKind::SpareAssigned, "host=" + back.host + " came back", rank);
  if (phase_ == Phase::Running) on_fault(rank, fault, now);
  back.took_rank_in = generation_;  // it says what it holds for the rank before the job runs
}

// --- a fault, and the job's restart ---------------------------------------------------------------

//! The job stops at once; the ledger's account of the fault waits for the decision, when every
//! node has stopped and node rank 0's last lines before the fault are in.
void JobMaster::on_fault(int rank, const FaultReport& fault, Clock::time_point now) {
  ++interruptions_[fault.fault.name];
  cause_ = fault.fault.name;  // the nodes' stop names it at once; the decision may name an earlier fault
  detected_at_ = now;
  // The first report to arrive need not be the cause (a peer's collective fails milliseconds after
  // the rank that died): the blame is said once decided (decide()).
  std::cerr << "ctwin master: generation " << generation_ << " stops: node rank " << rank << " reported " << fault.fault.name
            << "; the cause is decided once every node has stopped\n";
  // The nodes keep the trainers that can rejoin while the cause is decided (the stop says so).
  begin_gathering(now, in_process_takes(scenario_.restart, fault.fault.name, fault.fault.effect, fault.fault.act, false));
}

void JobMaster::begin_gathering(Clock::time_point now, bool in_process) {
  ++generation_;
  phase_ = Phase::Gathering;
  decided_ = false;
  in_process_ = in_process;  // journaled with the generation: a master resumed says what the stop said
  launches_said_ = 0;
  gathering_since_ = now;
  for (auto& [id, a] : agents_) a.actions.clear();
  write_journal(now);  // a generation is never handed out before it is journaled
}

int JobMaster::vacancies() const {
  return static_cast<int>(std::count(slots_.begin(), slots_.begin() + width(), std::string()));
}

JobMaster::Agent* JobMaster::agent_at(int rank) {
  const auto& id = slots_[static_cast<std::size_t>(rank)];
  return id.empty() ? nullptr : &agents_.at(id);
}

//! Hot spares take vacant ranks, lowest first.
void JobMaster::fill_vacancies(Clock::time_point now) {
  for (std::size_t r = 0; r < static_cast<std::size_t>(width()); ++r) {
    if (!slots_[r].empty()) continue;
    for (auto& [id, a] : agents_)
      if (a.rank < 0 && !a.evicted) {
        a.rank = static_cast<int>(r);
        a.took_rank_in = generation_;
        slots_[r] = id;
        record(ledger_.at(now), EventKind::SpareAssigned, "host=" + a.host, static_cast<int>(r));
        std::cerr << "ctwin master: spare " << a.host << " takes node rank " << r << "\n";
        break;
      }
  }
}

//! Gathering: once decided and every rank is held by a node that has stopped and said what it can
//! restore, generation G runs from the newest step all of them hold.
void JobMaster::try_to_run(Clock::time_point now) {
  if (!decided_) {
    for (const auto& id : slots_)
      if (!id.empty() && (agents_.at(id).status.generation < generation_ || agents_.at(id).status.state == NodeState::Running)) return;
    decide(now);
    if (phase_ != Phase::Gathering) return;
  }
  if (prechecking(now)) return;
  if (vacancies() > 0 && !try_to_shrink(now)) {  // waiting for a spare
    waited_for_spare_ = true;
    return;
  }
  std::optional<std::set<std::int64_t>> common;
  for (int r = 0; r < width(); ++r) {
    const Agent& a = agents_.at(slots_[static_cast<std::size_t>(r)]);
    if (a.status.generation < generation_ || a.status.state == NodeState::Running) return;
    // A spare given this rank at the decision: what it holds for the rank, once it has looked.
    if (a.took_rank_in == generation_ && a.status.node_rank != a.rank) return;
    if (!a.status.restorable) continue;  // its trainer chooses its own restore
    std::set<std::int64_t> steps(a.status.restorable->begin(), a.status.restorable->end());
    if (!common) common = std::move(steps);
    else std::erase_if(*common, [&](std::int64_t s) { return !steps.count(s); });
  }
  if (common) std::erase_if(*common, [&](std::int64_t step) { return refused_steps_.count(step) > 0; });
  RestoreChoice choice{-2, {}};  // -2: no node keeps flash checkpoints, each trainer chooses
  if (common) choice = clean_restore_step(std::vector<std::int64_t>(common->begin(), common->end()), clean_bound_);
  restore_note_ = choice.warning;  // every step all ranks keep is past the onset: the nodes say so too
  if (!choice.warning.empty()) {
    std::cerr << "ctwin master: " << choice.warning << "\n";
    record(ledger_.marked(), EventKind::Health, choice.warning);
  }
  ledger_.charge(waited_for_spare_ ? Category::WaitingForSpares : Category::Restart, now);
  waited_for_spare_ = false;
  restore_step_ = choice.step;
  for (int r = 0; r < width() && restore_step_ >= 0; ++r) {
    const auto& held = agents_.at(slots_[static_cast<std::size_t>(r)]).status.restorable;
    CTWIN_INVARIANT_DETAIL(!held || std::find(held->begin(), held->end(), restore_step_) != held->end(),
                           "a generation restores a step that every rank holds",
                           "rank " + std::to_string(r) + " does not hold step " + std::to_string(restore_step_));
  }
  phase_ = Phase::Running;
  last_line_at_ = now;
  book_.launched();
  if (generation_ > 1) {
    budget_.restarted();
    record(ledger_.marked(), EventKind::RestartBegin,
           "generation=" + std::to_string(generation_) + " restore_step=" + std::to_string(restore_step_) + path_said(),
           -1, -1, cause_);
  }
  std::cerr << "ctwin master: generation " << generation_ << " runs on " << width() << " nodes from "
            << (restore_step_ >= 0 ? "step " + std::to_string(restore_step_) : std::string(restore_step_ == -1 ? "scratch" : "each trainer's choice"))
            << "\n";
  write_journal(now);
}

control::ClusterView JobMaster::view(Clock::time_point now) const {
  control::ClusterView v;
  v.now_s = static_cast<double>(ledger_.at(now)) / 1e6;
  v.job_nodes = o_.nnodes;
  v.replica_nodes = replica_nodes_;
  v.active_replicas = active_replicas_;
  v.total_replicas = total_replicas_;
  v.vacant_slots = vacancies();
  v.spares_available = spares();
  return v;
}

Plan JobMaster::plan_for(const Agent& a) const {
  Plan p;
  p.generation = generation_;
  p.node_rank = a.rank;
  p.nnodes = width();
  p.nproc_per_node = o_.nproc_per_node;
  if (const Agent* first = slots_[0].empty() ? nullptr : &agents_.at(slots_[0]); first && o_.trainer_port > 0) p.master_addr = first->address;
  p.master_port = o_.trainer_port;
  p.restore_step = restore_step_;
  p.actions = a.actions;
  p.cause = cause_;
  p.cadence = cadence_;
  p.run = o_.job + "/" + run_id_;
  p.adopt_steps = o_.adopt_steps;
  p.incarnation = incarnation_;
  p.answered_fault = a.answered_fault;
  p.checkpoint_requests = a.checkpoint_requests;
  p.in_process = in_process_;
  if (phase_ == Phase::Done) {
    p.what = PlanKind::Exit;
    p.exit_code = exit_code_;
    p.reason = reason_;
  } else if (a.evicted) {
    p.what = PlanKind::Exit;
    p.exit_code = 1;
    p.reason = "this node was taken out of the job (" + cause_ + ")";
  } else if (precheck_ && precheck_->tasks.count(a.id) && !precheck_->results.count(a.id)) {
    p.what = PlanKind::Precheck;
    p.precheck = precheck_->tasks.at(a.id);
    p.reason = precheck_->rounds ? "the precheck across nodes, round " + std::to_string(precheck_->rounds->round()) : "the node's own precheck";
  } else if (a.rank < 0 || phase_ == Phase::Rendezvous) {
    p.what = PlanKind::Wait;
    p.reason = a.rank < 0 ? "a hot spare" : "waiting for " + std::to_string(vacancies()) + " more nodes";
  } else if (phase_ == Phase::Gathering) {
    p.what = PlanKind::Stop;
    p.reason = generation_ > 1 ? "the job restarts after " + cause_ : "the job starts";
  } else {
    p.what = PlanKind::Run;
    p.reason = restore_note_;
  }
  return p;
}

void JobMaster::finish(int code, const std::string& reason, Clock::time_point now) {
  if (phase_ == Phase::Done) return;
  phase_ = Phase::Done;
  exit_code_ = code;
  reason_ = reason;
  std::cerr << "ctwin master: " << reason << "\n";
  close(now);
}

void JobMaster::close(Clock::time_point now) {
  ledger_.charge(Category::Restart, now);  // whatever is left: tearing down
  write_journal(now);                      // without the end row: a master started again goes on
  log_.close(ledger_.marked(), ledger_.ledger());
}

void JobMaster::record(Micros at, EventKind kind, const std::string& note, int node, int code, const std::string& fault_class, double speed) {
  log_.add(at, kind, note, log_node(node), -1, code, fault_class, speed);
  journal_dirty_ = true;
}

//! `a` is taken out of the job with its own command: its rank is left for a spare. With no spare
//! possible the node keeps its rank, and its command decides whether it leaves (and the job ends).
void JobMaster::replace(Agent& a, const std::string& note) {
  a.actions.push_back(to_string(Act::Replace));
  if (!o_.spares_possible) {
    record(ledger_.marked(), EventKind::Health, "node rank " + std::to_string(a.rank) + " is to be replaced (" + note +
                                                    "): no spare can take its place, its own command decides whether it leaves", a.rank);
    return;
  }
  const int rank = a.rank;
  if (rank >= 0) slots_[static_cast<std::size_t>(rank)].clear();
  a.left_rank = a.rank, a.rank = -1;
  a.evicted = true;
  record(ledger_.marked(), EventKind::Evicted, note, rank, -1, cause_);
}

MasterOptions MasterOptions::job_of_one(std::string host, int nproc_per_node, int max_restarts, bool prechecks, int node_index,
                                        std::string events_path) {
  MasterOptions o;
  o.log_node = std::max(node_index, 0);
  o.events_path = std::move(events_path);
  o.job = "ctwin";
  o.host = std::move(host);
  o.nnodes = 1;
  o.nproc_per_node = std::max(nproc_per_node, 1);
  o.trainer_port = 0;  // no rendezvous to name: the trainer is launched as it was given
  o.agent_timeout_s = std::numeric_limits<double>::infinity();  // the node is in this process: it never goes silent
  o.max_restarts = max_restarts;
  o.precheck_timeout_s = 1800;  // the node's own check, as long as a check before a restart may take
  o.adopt_steps = true;         // the node's persist folder is the job's: a run started again resumes from it
  o.spares_possible = false;
  o.set_cadence = false;
  o.precheck_across_nodes = false;
  o.prechecks = prechecks;
  return o;
}

}  // namespace ctwin::live
