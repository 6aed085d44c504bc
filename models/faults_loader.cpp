// The `faults` section (docs/scenario.md): each class, or a catalogue entry it uses, read and
// checked; and the up-front check that a trial can hold the episodes they come to.
#include <cmath>
#include <cstdio>
#include <set>

#include "core/kernel_log.hpp"
#include "models/fault_catalog.hpp"
#include "models/json_reader.hpp"
#include "models/network_domains.hpp"

namespace ctwin::json_reader {

namespace {

//! {"events": N, "exposure": "884736 gpu-days"} or {"sigma": 0.5}, either with "fleet_sigma", or that alone.
std::optional<RateUncertainty> read_rate_uncertainty(Reader& r, const json& u, const std::string& p, const Rate& rate) {
  if (!u.is_object()) {
    r.problem(p, std::string("expected an object ({\"events\": N, \"exposure\": \"884736 gpu-days\"} or {\"sigma\": 0.5}), got ") + u.type_name());
    return std::nullopt;
  }
  r.allow_only(u, p, {"events", "exposure", "sigma", "fleet_sigma", "prior", "fleet_exposure", "source"});
  RateUncertainty out;
  out.prior = r.string(u, p, "prior", false);  // the population prior a calibrated posterior came from (its name)
  if (const auto fleet = r.string(u, p, "fleet_exposure", false)) {
    std::string why;
    if (const auto e = parse_exposure(*fleet, why)) out.fleet_exposure_component_s = e->component_seconds;
    else r.problem(p + "/fleet_exposure", why);
    if (!out.prior) r.problem(p + "/fleet_exposure", "the fleet's own exposure goes with the prior it was pooled with (\"prior\")");
  }
  out.events = r.number(u, p, "events", false);
  out.sigma = r.number(u, p, "sigma", false);
  out.fleet_sigma = r.number(u, p, "fleet_sigma", false).value_or(0);
  if (out.fleet_sigma < 0 || out.fleet_sigma > 3)
    r.problem(p + "/fleet_sigma", "must be from 0 to 3 (a factor of 20 either way at one sigma), got " + Reader::fmt_number(out.fleet_sigma));
  if (out.events && (*out.events < 0 || *out.events > 1e12)) r.problem(p + "/events", "must be a count from 0 to 1e12, got " + Reader::fmt_number(*out.events));
  if (out.sigma && *out.sigma > 3) r.problem(p + "/sigma", "must be at most 3 (a factor of 20 either way at one sigma), got " + Reader::fmt_number(*out.sigma));
  if (out.events.has_value() == out.sigma.has_value()) {
    if (!u.contains("events") && !u.contains("sigma") && out.fleet_sigma > 0) return out;  // the fleets' spread alone
    if (!u.contains("events") && !u.contains("sigma"))
      r.problem(p, "give the evidence (\"events\" and \"exposure\"), a spread (\"sigma\") or the fleets' (\"fleet_sigma\")");
    else if (out.events && out.sigma)
      r.problem(p + "/sigma", "give the evidence or a spread, not both");
    return std::nullopt;
  }
  if (out.sigma && *out.sigma <= 0) r.problem(p + "/sigma", "must be above 0 (leave the field out for a rate held exact)");
  if (out.events) {
    std::string why;
    const auto* text = u.contains("exposure") && u["exposure"].is_string() ? u["exposure"].get_ptr<const json::string_t*>() : nullptr;
    if (!text) {
      r.problem(p + "/exposure", "missing: the component-time the events were seen over (\"884736 gpu-days\")");
      return std::nullopt;
    }
    const auto e = parse_exposure(*text, why);
    if (!e) {
      r.problem(p + "/exposure", why);
      return std::nullopt;
    }
    if (e->component_seconds <= 0) r.problem(p + "/exposure", "must be above 0");
    if (e->component != rate.component)
      r.problem(p + "/exposure", std::string("is of ") + to_string(e->component) + "s, the rate of " + to_string(rate.component) + "s");
    out.exposure_component_s = e->component_seconds;
  } else if (u.contains("exposure")) {
    r.problem(p + "/exposure", "a spread (\"sigma\") takes no exposure");
  }
  return out;
}

//! `covers`: the Xids and live stops a class that names a diagnosis category holds.
FaultClass::Covers read_covers(Reader& r, const json& c, const std::string& p) {
  r.allow_only(c, p, {"xids", "signals", "category", "source", "notes"});
  FaultClass::Covers covers;
  if (auto x = c.find("xids"); x != c.end()) {
    if (!x->is_array()) {
      r.problem(p + "/xids", std::string("expected an array of Xid codes, got ") + x->type_name());
    } else {
      covers.xids.emplace();
      for (std::size_t i = 0; i < x->size(); ++i) {
        const std::string at = p + "/xids/" + std::to_string(i);
        const json& v = (*x)[i];
        if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > kLargestXid) {
          r.problem(at, "expected an Xid code, a whole number from 1 to " + std::to_string(kLargestXid));
          continue;
        }
        const int code = v.get<int>();
        if (std::find(covers.xids->begin(), covers.xids->end(), code) != covers.xids->end()) r.problem(at, "Xid " + std::to_string(code) + " twice");
        else covers.xids->push_back(code);
      }
    }
  }
  if (auto sig = c.find("signals"); sig != c.end()) {
    if (!sig->is_array()) r.problem(p + "/signals", std::string("expected an array, got ") + sig->type_name());
    else
      for (std::size_t i = 0; i < sig->size(); ++i) {
        const json& v = (*sig)[i];
        const std::string at = p + "/signals/" + std::to_string(i);
        if (!v.is_string() || !live_stop_key(v.get<std::string>()))
          r.problem(at, "expected one of \"crash\", \"hang\", \"nan_loss\", \"node_lost\" (a live stop with no hardware signal)");
        else covers.signals.push_back(v.get<std::string>());
      }
  }
  covers.category = r.string(c, p, "category", false).value_or("");
  r.string(c, p, "source", false);
  r.string(c, p, "notes", false);
  return covers;
}

void read_fault(Reader& r, const json& root, const json& given, const std::string& p, Scenario& s, std::set<std::string>& names) {
  if (!given.is_object()) {
    r.problem(p, std::string("expected an object, got ") + given.type_name());
    return;
  }
  // {"use": "<catalog entry>", ...}: the entry, with the scenario's fields merged over it.
  json f = given;
  if (auto use = given.find("use"); use != given.end()) {
    const json::string_t* name = use->get_ptr<const json::string_t*>();
    const nlohmann::ordered_json* entry = name ? catalog_entry(*name) : nullptr;
    if (!entry) {
      std::string list;
      for (const auto& n : catalog_names()) list += (list.empty() ? "" : ", ") + n;
      r.problem(p + "/use", "no catalog entry " + use->dump() + " (the catalog has: " + list + ")");
      return;
    }
    f = json::parse(entry->dump());
    json patch = given;
    patch.erase("use");
    f.merge_patch(patch);
    if (!f.contains("rate")) {
      r.problem(p + "/rate", "the catalog has no public rate for \"" + *name + "\": give one");
      f["rate"] = "0/node-day";  // reported once, here
    }
  }
  r.allow_only(f, p,
               {"use", "name", "rate", "rate_uncertainty", "trend", "distribution", "weibull_shape", "lognormal_sigma", "effect", "speed_factor", "slows", "detection", "diagnosis",
                "recovery", "escalation", "remap", "xid", "covers", "group", "source", "notes", "calibration"});
  FaultClass fc;
  fc.name = r.string(f, p, "name", true).value_or("");
  if (!fc.name.empty() && !names.insert(fc.name).second) r.problem(p + "/name", "duplicate fault class \"" + fc.name + "\"");
  if (auto rate = r.with_unit(f, p, "rate", true, parse_rate, "0.17/gpu-year")) fc.rate = *rate;
  if (auto u = f.find("rate_uncertainty"); u != f.end()) fc.uncertainty = read_rate_uncertainty(r, *u, p + "/rate_uncertainty", fc.rate);
  if (const auto group = r.string(f, p, "group", false)) {
    fc.group = class_group_named(*group);
    if (!fc.group) r.problem(p + "/group", "expected one of \"gpu\", \"gpu_memory\", \"network\", \"host\", \"software\", got \"" + *group + "\"");
  }
  fc.distribution = choose<Distribution>(r, f, p, "distribution", false,
                                         {{"exponential", Distribution::Exponential},
                                          {"weibull", Distribution::Weibull},
                                          {"lognormal", Distribution::Lognormal}})
                        .value_or(Distribution::Exponential);
  auto sigma = r.number(f, p, "lognormal_sigma", false, 0.0);
  if (fc.distribution == Distribution::Lognormal) {
    if (!sigma && !f.contains("lognormal_sigma")) r.problem(p + "/lognormal_sigma", "missing: a lognormal class needs its sigma");
    else if (sigma && *sigma > 5) r.problem(p + "/lognormal_sigma", "must be at most 5");
    fc.lognormal_sigma = sigma.value_or(1.0);
  } else if (sigma) {
    r.problem(p + "/lognormal_sigma", "only a \"lognormal\" distribution takes a sigma");
  }
  auto shape = r.number(f, p, "weibull_shape", false, 0.0);
  if (fc.distribution == Distribution::Weibull) {
    if (!shape && !f.contains("weibull_shape")) r.problem(p + "/weibull_shape", "missing: a Weibull class needs its shape");
    else if (shape && (*shape < 0.05 || *shape > 20))
      r.problem(p + "/weibull_shape", "must be between 0.05 and 20, got " + Reader::fmt_number(*shape));
    fc.weibull_shape = shape.value_or(1.0);
  } else if (shape) {
    r.problem(p + "/weibull_shape", "only a \"weibull\" distribution takes a shape");
  }
  if (auto t = f.find("trend"); t != f.end()) {
    const std::string tp = p + "/trend";
    if (!t->is_object()) {
      r.problem(tp, std::string("expected an object ({\"shape\": 1.4, \"age\": \"180d\"}), got ") + t->type_name());
    } else if (fc.distribution != Distribution::Exponential) {
      r.problem(tp, "only an exponential class takes a trend (a power law in its rate: Crow-AMSAA)");
    } else {
      r.allow_only(*t, tp, {"shape", "age", "source"});
      RateTrend trend;
      const auto trend_shape = r.number(*t, tp, "shape", true);
      if (trend_shape && (*trend_shape < 0.1 || *trend_shape > 10))
        r.problem(tp + "/shape", "must be between 0.1 and 10 (1: no trend), got " + Reader::fmt_number(*trend_shape));
      trend.shape = trend_shape.value_or(1.0);
      trend.age_us = r.duration(*t, tp, "age", true, true).value_or(1);
      fc.trend = trend;
    }
  }
  fc.effect = choose<Effect>(r, f, p, "effect", true,
                             {{"crash", Effect::Crash},
                              {"hang", Effect::Hang},
                              {"slow", Effect::Slow},
                              {"sdc", Effect::Sdc},
                              {"flap", Effect::Flap},
                              {"none", Effect::None}})
                  .value_or(Effect::Crash);
  auto speed = r.number(f, p, "speed_factor", false, 0.0);
  if (fc.effect == Effect::Slow) {
    if (!speed && !f.contains("speed_factor")) r.problem(p + "/speed_factor", "missing: a slow fault needs its speed factor");
    else if (speed && *speed >= 1.0)
      r.problem(p + "/speed_factor", "must be below 1 (a fraction of full speed), got " + Reader::fmt_number(*speed));
    else if (speed && *speed < kSlowestSpeed)
      r.problem(p + "/speed_factor", "below a millionth of full speed is a stall: use the effect \"hang\"");
    fc.speed_factor = speed.value_or(1.0);
  } else if (speed) {
    r.problem(p + "/speed_factor", "only a \"slow\" fault takes a speed factor");
  }
  fc.slows = choose<SlowedPart>(r, f, p, "slows", false,
                                {{"compute", SlowedPart::Compute}, {"nvlink", SlowedPart::NvLink}, {"nic", SlowedPart::Nic}})
                 .value_or(SlowedPart::Compute);
  if (fc.slows != SlowedPart::Compute) {
    if (fc.effect != Effect::Slow) r.problem(p + "/slows", "only a \"slow\" fault slows a part");
    else if (fc.rate.component != Component::Gpu) r.problem(p + "/slows", "an NVLink port or a NIC is a GPU's: give the rate per GPU");
    // The factor is the port's bandwidth left; the job's speed comes from the step model.
    const json* job = root.contains("job") ? &root["job"] : nullptr;
    const bool step_from_workload = root.contains("workload") && job && !job->contains("step_time") && !job->contains("tokens_per_s");
    if (!step_from_workload)
      r.problem(p + "/slows", "a port's bandwidth reaches the job's speed through the step model: give a workload, and no step_time");
  }
  fc.detection_us = r.duration(f, p, "detection", true).value_or(0);
  fc.diagnosis_us = r.duration(f, p, "diagnosis", false).value_or(0);
  if (const json* rec = r.object(f, p, "recovery", true)) {
    const std::string rp = p + "/recovery";
    r.allow_only(*rec, rp, {"action", "duration", "source"});
    fc.action = choose_act(r, *rec, rp, "action", kFaultActions).value_or(Act::Restart);
    fc.action_us = r.duration(*rec, rp, "duration", true).value_or(0);
    r.string(*rec, rp, "source", false);
    const bool network = is_network(fc.rate.component);
    if (network && fc.action != Act::Replace && rec->contains("action"))
      r.problem(rp + "/action", std::string("a ") + to_string(fc.rate.component) +
                                    " fault takes action \"replace\": its duration is how long until the part is back");
    const bool passive = fc.effect == Effect::Slow || fc.effect == Effect::Flap || fc.effect == Effect::None;
    if (!network && passive && fc.action != Act::None && rec->contains("action"))
      r.problem(rp + "/action", std::string("a ") + to_string(fc.effect) +
                                    " fault takes action \"none\" (slow: the job runs slow for detection + duration; "
                                    "flap: duration is how long the link is out)");
    if (!network && !passive && fc.action == Act::None)
      r.problem(rp + "/action", "a crash or hang needs an action that brings the job back (restart, reset_gpu, reboot, replace)");
  }
  if (const json* e = r.object(f, p, "escalation", false)) {
    const std::string ep = p + "/escalation";
    r.allow_only(*e, ep, {"after", "within", "action", "duration", "source"});
    FaultClass::Escalation esc;
    esc.after = static_cast<int>(r.integer(*e, ep, "after", true, 2, 1000).value_or(2));
    esc.within_us = r.duration(*e, ep, "within", true, true).value_or(1);
    esc.action = choose_act(r, *e, ep, "action", kRepairActions).value_or(Act::Replace);
    esc.action_us = r.duration(*e, ep, "duration", true).value_or(0);
    r.string(*e, ep, "source", false);
    if (fc.effect != Effect::Crash && fc.effect != Effect::Hang && fc.effect != Effect::Sdc)
      r.problem(ep, "only faults that stop the job (crash, hang, sdc) escalate");
    fc.escalation = esc;
  }
  if (const json* m = r.object(f, p, "remap", false)) {
    const std::string mp = p + "/remap";
    r.allow_only(*m, mp, {"spare_rows", "failure_probability", "replace_time", "after", "source"});
    FaultClass::RowRemap remap;
    remap.spare_rows = static_cast<int>(r.integer(*m, mp, "spare_rows", true, 0, 1'000'000).value_or(8));
    remap.failure_probability = r.probability(*m, mp, "failure_probability").value_or(0);
    remap.replace_us = r.duration(*m, mp, "replace_time", true).value_or(0);
    remap.after = static_cast<int>(r.integer(*m, mp, "after", false, 1, 1'000'000).value_or(1));
    r.string(*m, mp, "source", false);
    // A double-bit error (Xid 48, a crash) asks for a remap at once; correctable errors (counted
    // only) accumulate on their GPU until the after-th.
    if (fc.effect == Effect::Crash && f.value("xid", -1) != 48)
      r.problem(mp, "a row remap follows a double-bit ECC error: give the class \"xid\": 48");
    else if (fc.effect != Effect::Crash && fc.effect != Effect::None)
      r.problem(mp, "a remap follows a double-bit error (a crash) or accumulated correctable errors (effect \"none\")");
    else if (fc.effect == Effect::Crash && remap.after != 1)
      r.problem(mp + "/after", "a double-bit error asks for its remap at once");
    fc.remap = remap;
  }
  if ((fc.effect == Effect::Flap || fc.effect == Effect::Sdc || fc.effect == Effect::None) && is_network(fc.rate.component))
    r.problem(p + "/effect", std::string("a ") + to_string(fc.effect) + " fault strikes a GPU or a node");
  if (is_network(fc.rate.component)) {
    if (!s.cluster.topology) r.problem(p + "/rate", std::string("a ") + to_string(fc.rate.component) +
                                                    " fault needs the fabric: add /cluster/topology");
    if (fc.effect == Effect::Hang) r.problem(p + "/effect", "a network fault is a crash (NCCL errors) or slow (fewer rails, less bandwidth)");
    if (fc.rate.component == Component::Spine && fc.effect != Effect::Slow)
      r.problem(p + "/effect", "a spine failure disconnects nothing, it cuts bandwidth: use \"slow\" with a speed factor");
    if (fc.rate.component == Component::NvSwitch && s.cluster.topology && s.cluster.topology->nvlink_domain_nodes == 0)
      r.problem(p + "/rate", "an NVLink switch tray belongs to a multi-node NVLink domain: add /cluster/topology/nvlink_domain");
  }
  if (auto xid = r.integer(f, p, "xid", false, 1, kLargestXid)) fc.xid = static_cast<int>(*xid);
  if (const json* c = r.object(f, p, "covers", false)) fc.covers = read_covers(r, *c, p + "/covers");
  r.string(f, p, "source", false);
  r.string(f, p, "notes", false);
  if (fc.rate.component == Component::Gpu && s.cluster.gpus_per_node < 1) return;
  s.faults.push_back(std::move(fc));
}

}  // namespace

void read_faults(Reader& r, const json& root, Scenario& s) {
  auto it = root.find("faults");
  if (it == root.end()) {
    r.problem("/faults", "missing required array (an empty array means no faults)");
    return;
  }
  if (!it->is_array()) {
    r.problem("/faults", std::string("expected an array, got ") + it->type_name());
    return;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < it->size(); ++i) read_fault(r, root, (*it)[i], "/faults/" + std::to_string(i), s, names);
}

//! The fault episodes one trial should expect: over the horizon, or at least the work.
void check_fault_volume(Reader& r, const Scenario& s) {
  const double span_s = micros_to_seconds(s.job.horizon_us.value_or(s.job.work_us.value_or(0)));
  double total = 0, largest = 0;
  std::size_t largest_at = 0;
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const FaultClass& f = s.faults[i];
    // A trend's power law too: its cumulative intensity over the span, not its starting rate's.
    const double expected = expected_over(f.rate.per_component_second * static_cast<double>(component_count(s, f)), span_s,
                                          f.trend ? f.trend->shape : 1, f.trend ? micros_to_seconds(f.trend->age_us) : 0);
    total += expected;
    if (expected > largest) largest = expected, largest_at = i;
  }
  if (total > kMostFaultsPerTrial) {
    char text[200];
    std::snprintf(text, sizeof text,
                  "the faults come to about %.3g episodes in one trial (this class %.3g), more than the %.0e a trial "
                  "can hold: check the rate's unit",
                  total, largest, kMostFaultsPerTrial);
    r.problem("/faults/" + std::to_string(largest_at) + "/rate", text);
  }
}

}  // namespace ctwin::json_reader
