// The scenario's `policies` section: the one file format the simulator and the live controller both
// read (docs/scenario.md). Checkpoint intervals, Xid -> action, elastic shrink/regrow, the precheck,
// run-time straggler eviction and the operator's answer to a dry spare pool.
#include <map>
#include <string>

#include "models/json_reader.hpp"

namespace ctwin::json_reader {

namespace {

void read_checkpoint_policy(Reader& r, const json& ck, Scenario& s) {
  const std::string p = "/policies/checkpoint";
  r.allow_only(ck, p, {"type", "interval", "mtbf", "prior_weight", "notes"});
  using Kind = CheckpointPolicySpec::Kind;
  auto type = r.string(ck, p, "type", true);
  const std::pair<const char*, Kind> kinds[] = {{"fixed", Kind::Fixed}, {"young", Kind::Young}, {"daly", Kind::Daly}, {"adaptive", Kind::Adaptive}};
  bool known = false;
  for (const auto& [name, kind] : kinds)
    if (type && *type == name) s.checkpoint_policy.kind = kind, known = true;
  if (type && !known) r.problem(p + "/type", "unknown checkpoint policy \"" + *type + "\" (one of: fixed, young, daly, adaptive)");
  const bool fixed = s.checkpoint_policy.kind == Kind::Fixed;
  s.checkpoint_policy.interval_us = r.duration(ck, p, "interval", fixed, true).value_or(0);
  if (!fixed && ck.contains("interval")) r.problem(p + "/interval", "only a \"fixed\" policy takes an interval");
  s.checkpoint_policy.mtbf_us = r.duration(ck, p, "mtbf", false, true);
  if (auto w = r.number(ck, p, "prior_weight", false, 0.0)) s.checkpoint_policy.prior_weight = *w;
  r.string(ck, p, "notes", false);
}

std::optional<Act> action_named(Reader& r, const json& parent, const std::string& pointer, const char* key) {
  return choose_act(r, parent, pointer, key, kRepairActions);
}

//! {"79": "replace", "48": {"action": "reset_gpu", "duration": "2min"}}
void read_xid_actions(Reader& r, const json& table, Scenario& s) {
  const std::string p = "/policies/xid_actions";
  for (const auto& [key, value] : table.items()) {
    const std::string at = Reader::at(p, key);
    int xid = -1;
    try {
      std::size_t used = 0;
      xid = std::stoi(key, &used);
      if (used != key.size() || xid < 0 || xid > 999) xid = -1;
    } catch (const std::exception&) {
      xid = -1;
    }
    if (xid < 0) {
      r.problem(at, "the key must be an Xid code, an integer between 0 and 999");
      continue;
    }
    XidActionSpec spec;
    if (value.is_string()) {
      // The short form: the pointer of a problem is the entry itself.
      const std::size_t before = r.problems.size();
      spec.action = action_named(r, json{{"action", value}}, at, "action").value_or(Act::Restart);
      if (r.problems.size() > before) r.problems.back().pointer = at;
    } else if (value.is_object()) {
      r.allow_only(value, at, {"action", "duration", "source"});
      spec.action = action_named(r, value, at, "action").value_or(Act::Restart);
      spec.action_us = r.duration(value, at, "duration", false);
    } else {
      r.problem(at, std::string("expected an action name or {\"action\", \"duration\"}, got ") + value.type_name());
      continue;
    }
    s.xid_actions[xid] = spec;
  }
}

void read_elastic(Reader& r, const json& e, Scenario& s) {
  const std::string p = "/policies/elastic";
  r.allow_only(e, p, {"mode", "replica_nodes", "min_replicas", "regrow", "reform", "recover", "source", "notes"});
  enum class Mode { Wait, Shrink, Quorum };
  const Mode mode = choose<Mode>(r, e, p, "mode", true, {{"wait", Mode::Wait}, {"shrink", Mode::Shrink}, {"quorum", Mode::Quorum}}).value_or(Mode::Wait);
  s.elastic.shrink = mode == Mode::Shrink;
  s.elastic.quorum = mode == Mode::Quorum;
  s.elastic.replica_nodes = static_cast<int>(r.integer(e, p, "replica_nodes", mode != Mode::Wait, 1, 1'000'000).value_or(1));
  if (s.elastic.quorum) {
    s.elastic.reform_us = r.duration(e, p, "reform", true).value_or(0);
    s.elastic.recover_us = r.duration(e, p, "recover", true).value_or(0);
  } else {
    for (const char* only : {"reform", "recover"})
      if (e.contains(only)) r.problem(Reader::at(p, only), "only a quorum (\"mode\": \"quorum\") re-forms and recovers from a peer");
  }
  r.string(e, p, "source", false);
  if (s.job.nodes > 0 && s.job.nodes % s.elastic.replica_nodes != 0)
    r.problem(p + "/replica_nodes", "must divide the job's " + std::to_string(s.job.nodes) + " nodes (whole replicas)");
  const int replicas = s.job.nodes / std::max(1, s.elastic.replica_nodes);
  s.elastic.min_replicas = static_cast<int>(r.integer(e, p, "min_replicas", false, 1, 1'000'000).value_or(1));
  if (replicas > 0 && s.elastic.min_replicas > replicas)
    r.problem(p + "/min_replicas", "the job has only " + std::to_string(replicas) + " replicas");
  s.elastic.regrow = r.boolean(e, p, "regrow").value_or(true);
}

void read_precheck(Reader& r, const json& c, Scenario& s) {
  const std::string p = "/policies/precheck";
  r.allow_only(c, p, {"enabled", "duration", "detect_probability", "evict_stragglers", "confirm_rounds", "source", "notes"});
  s.precheck.enabled = r.boolean(c, p, "enabled").value_or(true);
  s.precheck.duration_us = r.duration(c, p, "duration", true, true).value_or(0);
  s.precheck.detect_probability = r.probability(c, p, "detect_probability").value_or(1);
  s.precheck.evict_stragglers = r.boolean(c, p, "evict_stragglers").value_or(true);
  s.precheck.confirm_rounds = static_cast<int>(r.integer(c, p, "confirm_rounds", false, 0, 10).value_or(1));
}

void read_stragglers(Reader& r, const json& c, Scenario& s) {
  const std::string p = "/policies/stragglers";
  r.allow_only(c, p, {"evict", "observe", "z_threshold", "source", "notes"});
  s.stragglers.evict = r.boolean(c, p, "evict").value_or(true);
  s.stragglers.observe_us = r.duration(c, p, "observe", true, true).value_or(0);
  s.stragglers.z_threshold = r.number(c, p, "z_threshold", false, 0.0).value_or(3.5);
}

//! {"top_up": {"nodes": 16, "delay": "1d", "below": 1, "at_most": 32}, "expedited_repair": "1d"}
void read_spare_pool(Reader& r, const json& c, Scenario& s) {
  const std::string p = "/policies/spare_pool";
  r.allow_only(c, p, {"top_up", "expedited_repair", "source", "notes"});
  SparePoolSpec& pool = s.spare_pool;
  if (const json* t = r.object(c, p, "top_up", false)) {
    const std::string tp = p + "/top_up";
    r.allow_only(*t, tp, {"nodes", "delay", "below", "at_most", "source", "notes"});
    pool.top_up_nodes = static_cast<int>(r.integer(*t, tp, "nodes", true, 0, 1'000'000).value_or(0));
    // [A] a day to borrow nodes from another job or a reservation, unless told: so one pointer
    // (--set /policies/spare_pool/top_up/nodes=16) prices a top-up.
    pool.top_up_delay_us = r.duration(*t, tp, "delay", false).value_or(86400 * kMicrosPerSecond);
    pool.top_up_below = static_cast<int>(r.integer(*t, tp, "below", false, 1, 1'000'000).value_or(1));
    // One top-up unless told more: an operator borrows a batch, not an endless stream.
    pool.top_up_at_most = static_cast<int>(r.integer(*t, tp, "at_most", false, 0, 1'000'000).value_or(pool.top_up_nodes));
    r.string(*t, tp, "source", false);
  }
  pool.expedited_repair_us = r.duration(c, p, "expedited_repair", false, true);
  r.string(c, p, "source", false);
}

void read_hang_detection(Reader& r, const json& c, Scenario& s) {
  const std::string p = "/policies/hang_detection";
  r.allow_only(c, p, {"factor", "minimum", "source", "notes"});
  HangDetectionSpec spec;
  spec.factor = r.number(c, p, "factor", false, 0.0).value_or(5);
  spec.minimum_us = r.duration(c, p, "minimum", false).value_or(0);
  s.hang_detection = spec;
}

void read_loss_spike(Reader& r, const json& c, Scenario& s) {
  const std::string p = "/policies/loss_spike";
  r.allow_only(c, p, {"window", "z", "ratio", "confirm", "source", "notes"});
  LossSpikeSpec spec;
  spec.window = static_cast<int>(r.integer(c, p, "window", false, 4, 100000).value_or(spec.window));  // half of it is the baseline
  spec.z = r.number(c, p, "z", false, 0.0).value_or(spec.z);
  spec.ratio = r.number(c, p, "ratio", false, 0.0).value_or(spec.ratio);
  spec.confirm = static_cast<int>(r.integer(c, p, "confirm", false, 1, 100000).value_or(spec.confirm));
  s.loss_spike = spec;
}

void read_live_stops(Reader& r, const json& c, Scenario& s) {
  const std::string p = "/policies/live_stops";
  r.allow_only(c, p, {"crash", "hang", "nan_loss", "node_lost", "notes"});
  for (const auto& [key, name] : {std::pair<const char*, std::optional<std::string>*>{"crash", &s.live_stops.crash},
                                  {"hang", &s.live_stops.hang}, {"nan_loss", &s.live_stops.nan_loss},
                                  {"node_lost", &s.live_stops.node_lost}}) {
    const auto given = r.string(c, p, key, false);
    if (!given) continue;
    // With fault classes (a scenario, not a policy file alone), the name must be one of them.
    bool known = s.faults.empty();
    for (const auto& fc : s.faults) known |= fc.name == *given;
    if (!known) r.problem(Reader::at(p, key), "no fault class \"" + *given + "\" in this scenario");
    else *name = *given;
  }
}

//! A class that covers a live stop (covers.signals) is that stop's class, unless
//! policies.live_stops names it; two classes covering one stop, or a stated name that is not the
//! class covering it, are problems.
void stops_from_covers(Reader& r, Scenario& s) {
  std::map<std::string, std::size_t> covering;  // stop -> class index
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    if (!s.faults[i].covers) continue;
    const auto& signals = s.faults[i].covers->signals;
    for (std::size_t k = 0; k < signals.size(); ++k) {
      const std::string at = "/faults/" + std::to_string(i) + "/covers/signals/" + std::to_string(k);
      if (const auto [it, added] = covering.try_emplace(signals[k], i); !added) {
        r.problem(at, "the live stop \"" + signals[k] + "\" is covered by \"" + s.faults[it->second].name + "\" too: a stop is one class");
        continue;
      }
      std::optional<std::string>& stated = *s.live_stops.named(signals[k]);
      if (stated && *stated != s.faults[i].name)
        r.problem(at, "policies.live_stops." + signals[k] + " names \"" + *stated + "\", not this class");
      else stated = s.faults[i].name;
    }
  }
}

}  // namespace

void read_policies(Reader& r, const json& root, Scenario& s) {
  const json* pol = r.object(root, "", "policies", true);
  if (!pol) return;
  r.allow_only(*pol, "/policies",
               {"checkpoint", "xid_actions", "elastic", "precheck", "stragglers", "spare_pool", "hang_detection", "loss_spike",
                "live_stops", "notes"});
  if (const json* ck = r.object(*pol, "/policies", "checkpoint", true)) read_checkpoint_policy(r, *ck, s);
  if (const json* x = r.object(*pol, "/policies", "xid_actions", false)) read_xid_actions(r, *x, s);
  if (const json* e = r.object(*pol, "/policies", "elastic", false)) read_elastic(r, *e, s);
  if (const json* c = r.object(*pol, "/policies", "precheck", false)) read_precheck(r, *c, s);
  if (const json* c = r.object(*pol, "/policies", "stragglers", false)) read_stragglers(r, *c, s);
  if (const json* c = r.object(*pol, "/policies", "spare_pool", false)) read_spare_pool(r, *c, s);
  if (const json* c = r.object(*pol, "/policies", "hang_detection", false)) read_hang_detection(r, *c, s);
  if (const json* c = r.object(*pol, "/policies", "loss_spike", false)) read_loss_spike(r, *c, s);
  if (const json* c = r.object(*pol, "/policies", "live_stops", false)) read_live_stops(r, *c, s);
  stops_from_covers(r, s);
}

}  // namespace ctwin::json_reader
