#include "live/cluster/protocol.hpp"

#include "live/job/cadence_json.hpp"
#include "models/json_reader.hpp"

namespace ctwin::live::cluster {

using nlohmann::json;
using json_reader::Reader;

namespace {

constexpr std::int64_t kMostNodes = 1'000'000;
constexpr std::int64_t kNewest = std::numeric_limits<std::int64_t>::max() / 2;
constexpr std::int64_t kMostRanksInGroup = 1 << 20;
constexpr std::size_t kLargestBlob = 4096;  //!< hexadecimal characters: an NCCL id is 256

json parse_body(const std::string& body, const char* what) {
  if (body.size() > kLargestBody) throw ProtocolError(std::string(what) + ": body larger than 1 MiB");
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw ProtocolError(std::string(what) + ": not JSON");
  if (!j.is_object()) throw ProtocolError(std::string(what) + ": expected a JSON object");
  return j;
}

void check_version(Reader& r, const json& j) {
  if (const auto v = r.integer(j, "", "protocol", true, 0, 1'000'000); v && *v != kProtocolVersion)
    r.problem("/protocol", "this master speaks protocol " + std::to_string(kProtocolVersion) + ", got " + std::to_string(*v));
}

void throw_problems(const Reader& r, const char* what) {
  if (r.problems.empty()) return;
  std::string message = what;
  for (const auto& p : r.problems) message += "\n  " + (p.pointer.empty() ? "/" : p.pointer) + ": " + p.reason;
  throw ProtocolError(message);
}

std::string bounded_string(Reader& r, const json& j, const std::string& pointer, const char* key, bool required, std::size_t longest = 256) {
  auto s = r.string(j, pointer, key, required);
  if (s && s->size() > longest) {
    r.problem(Reader::at(pointer, key), "longer than " + std::to_string(longest) + " characters");
    return {};
  }
  return s.value_or("");
}

std::optional<std::vector<std::int64_t>> read_steps(Reader& r, const json& status, const std::string& pointer) {
  const auto it = status.find("restorable");
  if (it == status.end() || it->is_null()) return std::nullopt;
  if (!it->is_array() || it->size() > 4096) {
    r.problem(pointer + "/restorable", "expected null or an array of at most 4096 steps");
    return std::nullopt;
  }
  std::vector<std::int64_t> steps;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& step = (*it)[i];
    if (!step.is_number_integer() || step.get<std::int64_t>() < 0 || step.get<std::int64_t>() > kNewest) {
      r.problem(pointer + "/restorable/" + std::to_string(i), "expected a step (a non-negative integer)");
      return std::nullopt;
    }
    steps.push_back(step.get<std::int64_t>());
  }
  return steps;
}

}  // namespace

json to_json(const JoinRequest& m) {
  json j = {{"protocol", kProtocolVersion}, {"agent", m.agent}, {"node_id", m.node_id}, {"host", m.host}, {"address", m.address}, {"spare", m.spare}};
  if (!m.run.empty()) j["run"] = m.run;
  return j;
}

json to_json(const JoinReply& m) {
  return {{"protocol", kProtocolVersion}, {"job", m.job}, {"node_rank", m.node_rank}, {"report_interval_s", m.report_interval_s},
          {"incarnation", m.incarnation}};
}

json to_json(const Report& m) {
  json status = {{"generation", m.status.generation}, {"state", to_string(m.status.state)}, {"step", m.status.step}};
  status["restorable"] = m.status.restorable ? json(*m.status.restorable) : json(nullptr);
  status["node_rank"] = m.status.node_rank;
  if (!m.status.problem.empty()) status["problem"] = m.status.problem;
  if (m.status.launched) status["launched"] = to_string(*m.status.launched);
  json lines = json::array();
  for (const auto& l : m.lines) lines.push_back({{"age_s", l.age_s}, {"line", l.line}});
  json j = {{"protocol", kProtocolVersion}, {"agent", m.agent}, {"status", status}, {"lines", lines}};
  if (m.sent_us) j["sent_us"] = *m.sent_us;
  if (!m.sections.empty()) {
    json sections = json::array();
    for (const auto& x : m.sections) sections.push_back({{"local_rank", x.local_rank}, {"group", x.group}, {"seconds", x.seconds}});
    j["sections"] = sections;
  }
  if (m.precheck)
    j["precheck"] = {{"key", m.precheck->key},         {"passed", m.precheck->passed},           {"seconds", m.precheck->seconds},
                     {"gemm_flops", m.precheck->gemm_flops}, {"allreduce_s", m.precheck->allreduce_s}, {"error", m.precheck->error}};
  if (m.fault)
    j["fault"] = {{"class", m.fault->fault.name}, {"effect", to_string(m.fault->fault.effect)}, {"action", to_string(m.fault->fault.act)},
                  {"detail", m.fault->detail}, {"gpu", m.fault->gpu},
                  {"xid", m.fault->xid}, {"before_restoring", m.fault->before_restoring},            {"age_s", m.fault->age_s},   {"clean_step", m.fault->clean_step}};
  if (m.fault && m.fault->generation >= 0) j["fault"]["generation"] = m.fault->generation;
  if (!m.storage.empty()) {
    json storage = json::array();
    for (const auto& x : m.storage)
      storage.push_back({{"local_rank", x.local_rank}, {"step", x.step}, {"failing", x.failing}, {"detail", x.detail}, {"age_s", x.age_s}});
    j["storage"] = storage;
  }
  if (m.fault && m.fault->silent) j["fault"]["silent"] = true;
  if (m.fault && m.fault->ask) j["fault"]["ask"] = m.fault->id;
  if (!m.events.empty()) {
    json events = json::array();
    for (const auto& e : m.events)
      events.push_back({{"kind", to_string(e.kind)}, {"note", e.note}, {"gpu", e.gpu}, {"code", e.code}, {"class", e.fault_class},
                        {"speed", e.speed}, {"age_s", e.age_s}});
    j["events"] = events;
  }
  return j;
}

json to_json(const Plan& m) {
  json j = {{"protocol", kProtocolVersion}, {"generation", m.generation}, {"what", to_string(m.what)},
          {"node_rank", m.node_rank},     {"nnodes", m.nnodes},         {"nproc_per_node", m.nproc_per_node},
          {"master_addr", m.master_addr}, {"master_port", m.master_port}, {"restore_step", m.restore_step},
          {"actions", m.actions},         {"cause", m.cause},           {"exit_code", m.exit_code},
          {"reason", m.reason},           {"checkpoint_cadence", cadence_to_json(m.cadence)},
          {"run", m.run},                 {"adopt_steps", m.adopt_steps}, {"incarnation", m.incarnation},
          {"answered_fault", m.answered_fault}, {"checkpoint_requests", m.checkpoint_requests},
          {"in_process", m.in_process}};
  if (m.precheck)
    j["precheck"] = {{"key", m.precheck->key}, {"ranks", m.precheck->ranks}, {"first_rank", m.precheck->first_rank},
                       {"gpus", m.precheck->gpus}, {"timeout_s", m.precheck->timeout_s}};
  return j;
}

json to_json(const ExchangeRequest& m) {
  return {{"protocol", kProtocolVersion}, {"key", m.key}, {"rank", m.rank}, {"size", m.size}, {"blob", m.blob}};
}

json to_json(const ExchangeReply& m) { return {{"protocol", kProtocolVersion}, {"complete", m.complete}, {"blobs", m.blobs}}; }

ExchangeRequest parse_exchange_request(const std::string& body) {
  const json j = parse_body(body, "exchange request");
  Reader r;
  r.allow_only(j, "", {"protocol", "key", "rank", "size", "blob"});
  check_version(r, j);
  ExchangeRequest m;
  m.key = bounded_string(r, j, "", "key", true, 128);
  m.size = static_cast<int>(r.integer(j, "", "size", true, 1, kMostRanksInGroup).value_or(1));
  m.rank = static_cast<int>(r.integer(j, "", "rank", true, 0, kMostRanksInGroup - 1).value_or(0));
  if (m.rank >= m.size && r.problems.empty()) r.problem("/rank", "must be below /size");
  m.blob = bounded_string(r, j, "", "blob", true, kLargestBlob);
  if (m.blob.find_first_not_of("0123456789abcdef") != std::string::npos) r.problem("/blob", "expected lower-case hexadecimal");
  throw_problems(r, "exchange request");
  return m;
}

ExchangeReply parse_exchange_reply(const std::string& body) {
  const json j = parse_body(body, "exchange reply");
  Reader r;
  check_version(r, j);
  ExchangeReply m;
  m.complete = r.boolean(j, "", "complete").value_or(false);
  if (const auto it = j.find("blobs"); it != j.end() && it->is_array())
    for (const auto& b : *it)
      if (b.is_string() && b.get<std::string>().size() <= kLargestBlob) m.blobs.push_back(b.get<std::string>());
  if (m.complete && m.blobs.empty()) r.problem("/blobs", "a complete exchange has every rank's blob");
  throw_problems(r, "exchange reply");
  return m;
}

JoinRequest parse_join_request(const std::string& body) {
  const json j = parse_body(body, "join request");
  Reader r;
  r.allow_only(j, "", {"protocol", "agent", "node_id", "host", "address", "spare", "run"});
  check_version(r, j);
  JoinRequest m;
  m.agent = bounded_string(r, j, "", "agent", true, 64);
  if (m.agent.empty() && r.problems.empty()) r.problem("/agent", "must not be empty");
  m.node_id = r.integer(j, "", "node_id", false, -1, kMostNodes).value_or(-1);
  m.host = bounded_string(r, j, "", "host", false);
  m.address = bounded_string(r, j, "", "address", false);
  m.spare = r.boolean(j, "", "spare").value_or(false);
  m.run = bounded_string(r, j, "", "run", false, 256);
  throw_problems(r, "join request");
  return m;
}

JoinReply parse_join_reply(const std::string& body) {
  const json j = parse_body(body, "join reply");
  Reader r;
  check_version(r, j);
  JoinReply m;
  m.job = bounded_string(r, j, "", "job", true);
  m.node_rank = static_cast<int>(r.integer(j, "", "node_rank", true, -1, kMostNodes).value_or(-1));
  m.report_interval_s = r.number(j, "", "report_interval_s", true, 0.0).value_or(1);
  m.incarnation = r.integer(j, "", "incarnation", false, 0, kNewest).value_or(0);
  throw_problems(r, "join reply");
  return m;
}

Report parse_report(const std::string& body) {
  const json j = parse_body(body, "report");
  Reader r;
  r.allow_only(j, "", {"protocol", "agent", "status", "lines", "fault", "sections", "precheck", "sent_us", "storage", "events"});
  check_version(r, j);
  Report m;
  m.agent = bounded_string(r, j, "", "agent", true, 64);
  m.sent_us = r.integer(j, "", "sent_us", false, 0, kLatestSentUs);
  if (const json* s = r.object(j, "", "status", true)) {
    r.allow_only(*s, "/status", {"generation", "state", "step", "restorable", "node_rank", "problem", "launched"});
    m.status.generation = r.integer(*s, "/status", "generation", true, 0, kNewest).value_or(0);
    if (const auto state = r.string(*s, "/status", "state", true)) {
      if (const auto known = node_state_named(*state)) m.status.state = *known;
      else r.problem("/status/state", "expected waiting, running, stopped or finished, got \"" + state->substr(0, 32) + "\"");
    }
    m.status.step = r.integer(*s, "/status", "step", false, -1, kNewest).value_or(-1);
    m.status.restorable = read_steps(r, *s, "/status");
    m.status.node_rank = static_cast<int>(r.integer(*s, "/status", "node_rank", false, -1, kMostNodes).value_or(-1));
    m.status.problem = bounded_string(r, *s, "/status", "problem", false, kLongestLine);
    if (const auto launched = r.string(*s, "/status", "launched", false)) {
      if (const auto path = restart_path_named(*launched)) m.status.launched = *path;
      else r.problem("/status/launched", "expected relaunch, in_process or warm_standby, got \"" + launched->substr(0, 32) + "\"");
    }
  }
  if (const auto it = j.find("lines"); it != j.end()) {
    if (!it->is_array() || it->size() > kMostLines) {
      r.problem("/lines", "expected an array of at most " + std::to_string(kMostLines) + " lines");
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string p = "/lines/" + std::to_string(i);
        const json& l = (*it)[i];
        if (!l.is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        TrainerLine line;
        line.age_s = r.number(l, p, "age_s", true).value_or(0);
        if (line.age_s < 0 || line.age_s > 1e7) r.problem(p + "/age_s", "must be between 0 and 1e7 seconds");
        line.line = bounded_string(r, l, p, "line", true, kLongestLine);
        m.lines.push_back(std::move(line));
      }
    }
  }
  if (const json* c = r.object(j, "", "precheck", false)) {
    r.allow_only(*c, "/precheck", {"key", "passed", "seconds", "gemm_flops", "allreduce_s", "error"});
    NodeCheck check;
    check.key = bounded_string(r, *c, "/precheck", "key", true, 128);
    check.passed = r.boolean(*c, "/precheck", "passed").value_or(false);
    check.seconds = r.number(*c, "/precheck", "seconds", true).value_or(0);
    check.gemm_flops = r.number(*c, "/precheck", "gemm_flops", false).value_or(0);
    check.allreduce_s = r.number(*c, "/precheck", "allreduce_s", false).value_or(0);
    for (const auto& [name, value] : {std::pair{"seconds", check.seconds}, {"gemm_flops", check.gemm_flops}, {"allreduce_s", check.allreduce_s}})
      if (value < 0 || value > 1e18) r.problem(std::string("/precheck/") + name, "must be between 0 and 1e18");
    check.error = bounded_string(r, *c, "/precheck", "error", false, kLongestLine);
    m.precheck = check;
  }
  if (const json* f = r.object(j, "", "fault", false)) {
    r.allow_only(*f, "/fault", {"class", "effect", "action", "detail", "gpu", "xid", "age_s", "clean_step", "before_restoring", "generation", "silent", "ask"});
    FaultReport fault;
    fault.fault.name = bounded_string(r, *f, "/fault", "class", true, 64);
    if (const auto effect = r.string(*f, "/fault", "effect", true)) {
      if (const auto e = effect_named(*effect)) fault.fault.effect = *e;
      else r.problem("/fault/effect", "unknown effect \"" + *effect + "\"");
    }
    fault.fault.act = json_reader::choose_act(r, *f, "/fault", "action", kFaultActions).value_or(Act::Restart);
    fault.detail = bounded_string(r, *f, "/fault", "detail", false, kLongestLine);
    fault.gpu = static_cast<int>(r.integer(*f, "/fault", "gpu", false, -1, 1'000'000).value_or(-1));
    fault.xid = static_cast<int>(r.integer(*f, "/fault", "xid", false, -1, 1'000'000).value_or(-1));
    fault.age_s = r.number(*f, "/fault", "age_s", false).value_or(0);
    fault.clean_step = r.integer(*f, "/fault", "clean_step", false, -1, kNewest).value_or(-1);
    fault.before_restoring = r.boolean(*f, "/fault", "before_restoring").value_or(false);
    fault.generation = r.integer(*f, "/fault", "generation", false, 0, kNewest).value_or(-1);
    fault.silent = r.boolean(*f, "/fault", "silent").value_or(false);
    if (fault.age_s < 0 || fault.age_s > 1e7) r.problem("/fault/age_s", "must be between 0 and 1e7 seconds");
    if (const auto id = r.integer(*f, "/fault", "ask", false, 1, kNewest)) fault.ask = true, fault.id = *id;
    m.fault = fault;
  }
  if (const auto it = j.find("storage"); it != j.end()) {
    if (!it->is_array() || it->size() > 64) {
      r.problem("/storage", "expected an array of at most 64 persist outcomes");
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string p = "/storage/" + std::to_string(i);
        if (!(*it)[i].is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        const json& o = (*it)[i];
        r.allow_only(o, p, {"local_rank", "step", "failing", "detail", "age_s"});
        StorageReport x;
        x.local_rank = static_cast<int>(r.integer(o, p, "local_rank", true, 0, 4095).value_or(0));
        x.step = r.integer(o, p, "step", true, -1, kNewest).value_or(-1);
        x.failing = r.boolean(o, p, "failing").value_or(false);
        x.detail = bounded_string(r, o, p, "detail", false, kLongestLine);
        x.age_s = r.number(o, p, "age_s", false, 0.0).value_or(0);
        if (x.age_s > 1e7) r.problem(p + "/age_s", "must be between 0 and 1e7 seconds");
        m.storage.push_back(std::move(x));
      }
    }
  }
  if (const auto it = j.find("events"); it != j.end()) {
    if (!it->is_array() || it->size() > kMostEvents) {
      r.problem("/events", "expected an array of at most " + std::to_string(kMostEvents) + " events");
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string p = "/events/" + std::to_string(i);
        if (!(*it)[i].is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        const json& o = (*it)[i];
        r.allow_only(o, p, {"kind", "note", "gpu", "code", "class", "speed", "age_s"});
        NodeEvent e;
        if (const auto kind = r.string(o, p, "kind", true)) {
          const auto known = event_kind_named(*kind);
          if (known && node_may_report(*known)) e.kind = *known;
          else r.problem(p + "/kind", "a node reports health, slow_begin, slow_end, to_repair or evicted, not \"" + *kind + "\"");
        }
        e.note = bounded_string(r, o, p, "note", false, kLongestLine);
        e.gpu = static_cast<int>(r.integer(o, p, "gpu", false, -1, 4095).value_or(-1));
        e.code = static_cast<int>(r.integer(o, p, "code", false, -1, 1'000'000).value_or(-1));
        e.fault_class = bounded_string(r, o, p, "class", false, 64);
        e.speed = r.number(o, p, "speed", false, 0.0).value_or(1.0);
        e.age_s = r.number(o, p, "age_s", false, 0.0).value_or(0);
        if (e.age_s > 1e7) r.problem(p + "/age_s", "must be between 0 and 1e7 seconds");
        if (!(e.speed <= 1e3)) r.problem(p + "/speed", "must be at most 1000");
        m.events.push_back(std::move(e));
      }
    }
  }
  if (const auto it = j.find("sections"); it != j.end()) {
    if (!it->is_array() || it->size() > 4096) {
      r.problem("/sections", "expected an array of at most 4096 ranks");
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string p = "/sections/" + std::to_string(i);
        if (!(*it)[i].is_object()) {
          r.problem(p, "expected an object");
          continue;
        }
        RankSection x;
        x.local_rank = static_cast<int>(r.integer((*it)[i], p, "local_rank", true, 0, 4095).value_or(0));
        x.group = static_cast<int>(r.integer((*it)[i], p, "group", true, 0, 1'000'000).value_or(0));
        x.seconds = r.number((*it)[i], p, "seconds", true, 0.0).value_or(0);
        if (!(x.seconds <= 1e6)) r.problem(p + "/seconds", "must be at most 1e6 seconds");
        m.sections.push_back(x);
      }
    }
  }
  throw_problems(r, "report");
  return m;
}

Plan parse_plan(const std::string& body) {
  const json j = parse_body(body, "plan");
  Reader r;
  check_version(r, j);
  Plan m;
  m.generation = r.integer(j, "", "generation", true, 0, kNewest).value_or(0);
  if (const auto what = r.string(j, "", "what", true)) {
    if (const auto known = plan_kind_named(*what)) m.what = *known;
    else r.problem("/what", "expected wait, stop, run, exit or precheck");
  }
  m.node_rank = static_cast<int>(r.integer(j, "", "node_rank", true, -1, kMostNodes).value_or(-1));
  m.nnodes = static_cast<int>(r.integer(j, "", "nnodes", true, 0, kMostNodes).value_or(0));
  m.nproc_per_node = static_cast<int>(r.integer(j, "", "nproc_per_node", true, 1, 4096).value_or(1));
  m.master_addr = bounded_string(r, j, "", "master_addr", true);
  m.master_port = static_cast<int>(r.integer(j, "", "master_port", true, 0, 65535).value_or(0));
  m.restore_step = r.integer(j, "", "restore_step", true, -2, kNewest).value_or(-2);
  if (const auto it = j.find("actions"); it != j.end() && it->is_array())
    for (const auto& a : *it)
      if (a.is_string() && a.get<std::string>().size() < 64) m.actions.push_back(a.get<std::string>());
  m.cause = bounded_string(r, j, "", "cause", false, 64);
  m.exit_code = static_cast<int>(r.integer(j, "", "exit_code", false, 0, 255).value_or(0));
  m.reason = bounded_string(r, j, "", "reason", false, kLongestLine);
  m.run = bounded_string(r, j, "", "run", false, 256);
  m.adopt_steps = r.boolean(j, "", "adopt_steps").value_or(false);
  m.incarnation = r.integer(j, "", "incarnation", false, 0, kNewest).value_or(0);
  m.answered_fault = r.integer(j, "", "answered_fault", false, 0, kNewest).value_or(0);
  m.checkpoint_requests = r.integer(j, "", "checkpoint_requests", false, 0, kNewest).value_or(0);
  m.in_process = r.boolean(j, "", "in_process").value_or(false);
  if (const json* c = r.object(j, "", "checkpoint_cadence", false)) {
    m.cadence.revision = r.integer(*c, "/checkpoint_cadence", "revision", true, 0, kNewest).value_or(0);
    const auto it = c->find("changes");
    if (it == c->end() || !it->is_array() || it->size() > CheckpointCadence::kKept) {
      r.problem("/checkpoint_cadence/changes", "expected an array of at most " + std::to_string(CheckpointCadence::kKept) + " changes");
    } else {
      for (std::size_t i = 0; i < it->size(); ++i) {
        const std::string at = "/checkpoint_cadence/changes/" + std::to_string(i);
        if (!(*it)[i].is_object()) {
          r.problem(at, "expected an object");
          continue;
        }
        const auto from = r.integer((*it)[i], at, "from", true, 0, kNewest);
        const auto every = r.integer((*it)[i], at, "every", true, 1, kNewest);
        if (from && every) m.cadence.changes.push_back({*from, *every});
      }
    }
  }
  if (const json* c = r.object(j, "", "precheck", false)) {
    PrecheckTask task;
    task.key = bounded_string(r, *c, "/precheck", "key", true, 128);
    task.ranks = static_cast<int>(r.integer(*c, "/precheck", "ranks", true, 1, kMostRanksInGroup).value_or(1));
    task.first_rank = static_cast<int>(r.integer(*c, "/precheck", "first_rank", true, 0, kMostRanksInGroup - 1).value_or(0));
    task.gpus = static_cast<int>(r.integer(*c, "/precheck", "gpus", true, 1, 4096).value_or(1));
    task.timeout_s = r.number(*c, "/precheck", "timeout_s", true, 0.0).value_or(60);
    if (task.first_rank + task.gpus > task.ranks && r.problems.empty()) r.problem("/precheck/gpus", "this node's GPUs run past the group's ranks");
    m.precheck = task;
  }
  if (m.what == PlanKind::Precheck && !m.precheck && r.problems.empty()) r.problem("/precheck", "a precheck plan names its task");
  throw_problems(r, "plan");
  return m;
}

}  // namespace ctwin::live::cluster
