// The job master's journal: everything a restarted master needs to go on with the same job while
// the trainers keep running. One JSON document, rewritten atomically (core/atomic_file): a
// generation is journaled before any agent hears of it; joins and progress at most 5 times a
// second (an agent whose join was not journaled is told to join again).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/wall_clock.hpp"
#include "live/job/job_master.hpp"
#include "models/remediation.hpp"

namespace ctwin::live {

namespace {
constexpr const char* kPhases[] = {"rendezvous", "gathering", "running", "done"};
}

void JobMaster::write_journal(Clock::time_point now) {
  journal_written_ = now;
  journal_dirty_ = false;
  if (o_.journal_path.empty()) return;
  nlohmann::json agents = nlohmann::json::array();
  for (const auto& [id, a] : agents_)
    agents.push_back({{"id", id}, {"host", a.host}, {"address", a.address}, {"node_id", a.node_id}, {"rank", a.rank}, {"evicted", a.evicted},
                      {"actions", a.actions}});
  const LiveLedger::Saved saved = ledger_.saved();
  nlohmann::json cadence_changes = nlohmann::json::array();
  for (const auto& c : cadence_.changes) cadence_changes.push_back({c.from, c.every});
  nlohmann::json at_step = nlohmann::json::array();
  for (const auto& [step, us] : saved.productive_at_step) at_step.push_back({step, us});
  nlohmann::json failed_restores = nlohmann::json::array();
  for (const auto& [step, n] : failed_restores_) failed_restores.push_back({step, n});
  // Faults heard and not yet decided on: a master killed between a fault's report and its decision
  // decides with them (who failed first, before restoring or not, the clean step) when it is back.
  nlohmann::json faults = nlohmann::json::array();
  for (const auto& f : faults_) {
    const FaultReport& r = f.report;
    faults.push_back({{"rank", f.rank},           {"generation", f.generation},          {"agent", f.agent},
                      {"at_us", ledger_.at(f.at)}, {"learned_us", ledger_.at(f.learned)}, {"class", r.fault.name},
                      {"effect", to_string(r.fault.effect)}, {"action", to_string(r.fault.act)}, {"known", r.fault.known},
                      {"detail", r.detail},       {"gpu", r.gpu},                        {"xid", r.xid},
                      {"clean_step", r.clean_step}, {"before_restoring", r.before_restoring}, {"silent", r.silent},
                      {"agent_silent", f.agent_silent}});
  }
  const nlohmann::json j = {
      {"ctwin_journal", 1},
      {"job", o_.job},
      {"nnodes", o_.nnodes},
      {"start_utc_us", start_utc_us_},
      {"run_id", run_id_},
      {"written_utc_us", utc_now_us()},
      {"phase", kPhases[static_cast<int>(phase_)]},
      {"generation", generation_},
      {"decided", decided_},
      {"in_process", in_process_},
      {"restore_step", restore_step_},
      {"cause", cause_},
      {"restarts", budget_.restarts()},
      {"failed_launches", budget_.failed_launches()},
      {"failed_restores", failed_restores},
      {"faults", faults},
      {"refused_steps", refused_steps_},
      {"exit_code", exit_code_},
      {"reason", reason_},
      {"interruptions", interruptions_},
      {"active_replicas", active_replicas_},
      {"cadence", {{"revision", cadence_.revision}, {"changes", cadence_changes}}},
      {"agents", agents},
      {"ledger", {{"us", saved.ledger.us}, {"mark", saved.mark}, {"rolled_back_us", saved.rolled_back_us}, {"at_step", at_step}}},
      {"log", {{"classes", log_.class_names()}, {"rows", log_.row_texts()}}}};
  write_file_atomically(o_.journal_path, j.dump() + "\n");
}

void JobMaster::read_journal(Clock::time_point now) {
  if (o_.journal_path.empty()) return;
  std::ifstream in(o_.journal_path);
  if (!in) return;  // a new job
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  const auto bad = [&](const std::string& why) { throw BadInput(o_.journal_path + ": " + why); };
  if (j.is_discarded() || !j.is_object() || j.value("ctwin_journal", 0) != 1) bad("not a ctwin master journal");
  try {
    if (j.at("job").get<std::string>() != o_.job || j.at("nnodes").get<int>() != o_.nnodes)
      bad("the journal is of job \"" + j.at("job").get<std::string>() + "\" on " + std::to_string(j.at("nnodes").get<int>()) +
          " nodes, not this one (remove it to start a new job)");
    start_utc_us_ = j.at("start_utc_us").get<std::int64_t>();
    run_id_ = j.value("run_id", run_id_);  // a journal from before run ids keeps the new one
    const std::string phase = j.at("phase").get<std::string>();
    for (int p = 0; p < 4; ++p)
      if (phase == kPhases[p]) phase_ = static_cast<Phase>(p);
    generation_ = j.at("generation").get<std::int64_t>();
    decided_ = j.at("decided").get<bool>();
    in_process_ = j.value("in_process", false);  // a journal from before in-process restart: none
    restore_step_ = j.at("restore_step").get<std::int64_t>();
    cause_ = j.at("cause").get<std::string>();
    // A step given up stays given up, and a crash loop's count goes on: a master restarted in a
    // loop must not offer the same bad step again (journals from before these fields: none yet).
    budget_.resume(j.at("restarts").get<int>(), j.value("failed_launches", 0));
    for (const auto& pair : j.value("failed_restores", nlohmann::json::array())) failed_restores_[pair.at(0).get<std::int64_t>()] = pair.at(1).get<int>();
    for (const auto& step : j.value("refused_steps", nlohmann::json::array())) refused_steps_.insert(step.get<std::int64_t>());
    exit_code_ = j.at("exit_code").get<int>();
    reason_ = j.at("reason").get<std::string>();
    interruptions_ = j.at("interruptions").get<std::map<std::string, long>>();
    active_replicas_ = std::clamp(j.value("active_replicas", total_replicas_), 1, total_replicas_);
    book_.set_share(static_cast<double>(active_replicas_) / total_replicas_);
    if (const auto c = j.find("cadence"); c != j.end()) {
      cadence_.revision = c->at("revision").get<std::int64_t>();
      for (const auto& change : c->at("changes")) cadence_.changes.push_back({change.at(0).get<std::int64_t>(), change.at(1).get<std::int64_t>()});
    }
    for (const auto& a : j.at("agents")) {
      Agent agent;
      agent.id = a.at("id").get<std::string>();
      agent.host = a.at("host").get<std::string>();
      agent.address = a.at("address").get<std::string>();
      agent.node_id = a.at("node_id").get<std::int64_t>();
      agent.rank = a.at("rank").get<int>();
      agent.evicted = a.at("evicted").get<bool>();
      agent.actions = a.at("actions").get<std::vector<std::string>>();
      agent.last_seen = now;  // every agent gets a full timeout to reconnect
      if (agent.rank >= o_.nnodes) bad("/agents: rank " + std::to_string(agent.rank) + " beyond the job's nodes");
      if (agent.rank >= 0) slots_[static_cast<std::size_t>(agent.rank)] = agent.id;
      agents_[agent.id] = agent;
    }
    LiveLedger::Saved saved;
    const auto& l = j.at("ledger");
    saved.ledger.us = l.at("us").get<std::array<Micros, kCategoryCount>>();
    saved.mark = l.at("mark").get<Micros>();
    saved.rolled_back_us = l.at("rolled_back_us").get<Micros>();
    for (const auto& pair : l.at("at_step")) saved.productive_at_step[pair.at(0).get<std::int64_t>()] = pair.at(1).get<Micros>();
    if (saved.ledger.total() != saved.mark || saved.mark < 0)
      bad("/ledger: the categories add up to " + std::to_string(saved.ledger.total()) + " us, not to its mark " + std::to_string(saved.mark) +
          " us: the journal was changed or cut");
    ledger_.resume(saved);
    log_.resume(j.at("log").at("classes").get<std::vector<std::string>>(), j.at("log").at("rows").get<std::vector<std::string>>());
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("a field is missing or of the wrong type: ") + e.what());
  }
  // The ledger's time 0 is the job's start on the wall clock: the time the master was away counts.
  const auto away = std::chrono::microseconds(utc_now_us() - start_utc_us_);
  ledger_.rebase(now - std::chrono::duration_cast<Clock::duration>(away));
  const auto on_clock = [&](Micros us) { return ledger_.time_of(us); };
  try {
    for (const auto& f : j.value("faults", nlohmann::json::array())) {  // journals from before pending faults: none
      FaultReport r;
      r.fault.name = f.at("class").get<std::string>();
      const auto effect = effect_named(f.at("effect").get<std::string>());
      const auto act = act_named(f.at("action").get<std::string>(), kFaultActions);
      if (!effect || !act) bad("/faults: unknown effect or action of " + r.fault.name);
      r.fault.effect = *effect;
      r.fault.act = *act;
      r.fault.known = f.at("known").get<bool>();
      r.detail = f.at("detail").get<std::string>();
      r.gpu = f.at("gpu").get<int>();
      r.xid = f.at("xid").get<int>();
      r.clean_step = f.at("clean_step").get<std::int64_t>();
      r.before_restoring = f.at("before_restoring").get<bool>();
      r.silent = f.at("silent").get<bool>();
      faults_.push_back({f.at("rank").get<int>(), f.at("generation").get<std::int64_t>(), r, on_clock(f.at("at_us").get<Micros>()),
                         f.at("agent").get<std::string>(), on_clock(f.at("learned_us").get<Micros>()), f.value("agent_silent", false)});
    }
  } catch (const nlohmann::json::exception& e) {
    bad(std::string("/faults: a field is missing or of the wrong type: ") + e.what());
  }
  resumed_ = true;
  // What the nodes did while the master was away comes with their reports, each line and fault dated
  // by its node: the ledger goes on from the journal's last charge, not from the master's return.
  last_line_at_ = std::min(now, ledger_.time_of(ledger_.marked()));
  gathering_since_ = detected_at_ = now;
  // Dated when it resumed (the journal's last write is when it stopped); what happened meanwhile
  // comes from the nodes' reports, each at its own time, so rows of the outage may follow this one.
  char gone[64];
  std::snprintf(gone, sizeof gone, " after %.1f s away", static_cast<double>(ledger_.at(now) - ledger_.marked()) / 1e6);
  record(ledger_.at(now), EventKind::Health, "the master resumed from its journal at generation " + std::to_string(generation_) + gone);
  std::cerr << "ctwin master: resumed job " << o_.job << " from " << o_.journal_path << " at generation " << generation_ << " ("
            << kPhases[static_cast<int>(phase_)] << ")\n";
}

}  // namespace ctwin::live
