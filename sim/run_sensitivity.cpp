#include "sim/run_sensitivity.hpp"

#include <algorithm>
#include <cstdio>

#include "models/fault_timeline.hpp"
#include "models/scenario_loader.hpp"

namespace ctwin {

namespace {

constexpr double kFactors[] = {0.5, 2.0};  //!< below and above the scenario's value

//! A duration as the loader reads it back, to the microsecond.
std::string exact_duration(Micros us) { return std::to_string(us) + "us"; }
std::string factor_text(double f) { return f == 0.5 ? "x0.5" : "x2"; }

//! Whether any node is ever replaced (a spare taken, a node sent to repair).
bool replaces_nodes(const Scenario& s) {
  auto replaces = [](Act a) { return a == Act::Replace; };
  for (const FaultClass& f : s.faults)
    if (replaces(f.action) || (f.escalation && replaces(f.escalation->action)) || f.remap) return true;  // a failed remap replaces
  for (const auto& [xid, spec] : s.xid_actions)
    if (replaces(spec.action)) return true;
  return s.precheck.enabled || s.stragglers.evict;
}

AssumedField spare_nodes(const Scenario& s, bool replaces) {
  const int n = s.cluster.spare_nodes;
  AssumedField f{"spare nodes", "/cluster/spare_nodes", std::to_string(n), "x0.5 .. x2 of the scenario's",
                 "a spare pool is sized by a rule of thumb, not measured: half to twice it spans what operators keep", "", {}};
  if (!replaces) f.skipped = "no fault class replaces a node: the pool is never drawn on";
  else if (n == 0) f.skipped = "the scenario keeps no spares (cluster.spare_nodes is 0): half or twice none is none";
  if (!f.skipped.empty()) return f;
  for (const int k : {n / 2, 2 * n}) {
    // The job keeps its size; the cluster grows to hold a larger pool.
    std::vector<Setting> set{{"/cluster/spare_nodes", k}, {"/job/nodes", s.job.nodes}};
    if (s.cluster.nodes > 0 && s.job.nodes + k > s.cluster.nodes) set.push_back({"/cluster/nodes", s.job.nodes + k});
    if (s.spares.hot_count > k) set.push_back({"/spares/hot/count", k});
    f.variants.push_back({std::to_string(k), std::move(set), false});
  }
  return f;
}

AssumedField repair_time(const Scenario& s, bool replaces) {
  const RepairShop& shop = s.spares;
  AssumedField f{"repair time", "", "", "x0.5 .. x2 of the scenario's",
                 "a repair's turnaround (triage, parts, a vendor's visit) is rarely published, and shops differ by about twice either way", "", {}};
  double base_us = 0;
  if (shop.repair_median_us > 0) f.pointer = "/spares/repair/median", base_us = shop.repair_median_us;
  else if (shop.repair_mean_us > 0) f.pointer = "/spares/repair/mean", base_us = shop.repair_mean_us;
  else f.pointer = "/spares/repair_time", base_us = static_cast<double>(shop.fixed_us);
  f.given = format_duration(base_us / 1e6);
  if (!replaces) f.skipped = "no fault class replaces a node: nothing goes to repair";
  else if (base_us <= 0) f.skipped = "the scenario's repairs take no time";
  if (!f.skipped.empty()) return f;
  for (const double k : kFactors) {
    const Micros us = round_micros(base_us * k);
    f.variants.push_back({format_duration(micros_to_seconds(us)), {{f.pointer, exact_duration(us)}}, false});
  }
  return f;
}

AssumedField fleet_spread(const nlohmann::json& document, const Scenario& s, const RunOptions& options) {
  AssumedField f{"fleet spread", "/faults/*/rate_uncertainty/fleet_sigma", "as stated", "off .. as stated",
                 "off: every trial's fleet is the median fleet, only each rate's own evidence drawn; as stated: fleets differ as the "
                 "public ones do (docs/model.md)",
                 "", {}};
  double lowest = 0, highest = 0;
  RunVariant off{"off", {}, false};
  const nlohmann::json& faults = document.contains("faults") ? document["faults"] : nlohmann::json::array();
  for (std::size_t i = 0; i < s.faults.size() && i < faults.size(); ++i) {
    const double sigma = s.faults[i].uncertainty ? s.faults[i].uncertainty->fleet_sigma : 0;
    if (sigma <= 0) continue;
    lowest = lowest > 0 ? std::min(lowest, sigma) : sigma;
    highest = std::max(highest, sigma);
    const std::string at = "/faults/" + std::to_string(i);
    if (s.faults[i].uncertainty->events || s.faults[i].uncertainty->sigma) {
      off.settings.push_back({at + "/rate_uncertainty/fleet_sigma", 0});
    } else {  // the fleets' spread was its only uncertainty: none left
      nlohmann::json without = faults[i];
      without.erase("rate_uncertainty");
      off.settings.push_back({at, without});
    }
  }
  if (highest > 0) {
    char text[64];
    if (lowest == highest) std::snprintf(text, sizeof text, "fleet_sigma %g", highest);
    else std::snprintf(text, sizeof text, "fleet_sigma %g .. %g", lowest, highest);
    f.given = text;
  }
  if (!options.rate_uncertainty) f.skipped = "the run holds the rates exact (--rate-uncertainty off)";
  else if (off.settings.empty()) f.skipped = "no class states a fleet_sigma";
  else f.variants.push_back(std::move(off));
  return f;
}

AssumedField rate_uncertainty(const Scenario& s, const RunOptions& options) {
  AssumedField f{"rate uncertainty", "/faults/*/rate_uncertainty", "drawn", "held exact .. drawn",
                 "held exact: every trial runs the stated rates; drawn: what the evidence behind each rate, and the fleets' spread, allow",
                 "", {}};
  if (!options.rate_uncertainty) f.skipped = "the run holds the rates exact already (--rate-uncertainty off)";
  else if (!FaultTimelineModel::from(s).rates_uncertain()) f.skipped = "no class states a rate_uncertainty";
  else f.variants.push_back({"held exact", {}, true});
  return f;
}

AssumedField detection_times(const Scenario& s) {
  AssumedField f{"detection times", "/faults/*/detection", "as stated", "x0.5 .. x2 of each class's",
                 "a detection time is a watchdog's timeout or a health check's period: settings, which stacks choose about twice "
                 "apart either way (10 s checks to PyTorch's 10 min NCCL timeout)",
                 "", {}};
  const bool any = std::any_of(s.faults.begin(), s.faults.end(), [](const FaultClass& c) { return c.detection_us > 0; });
  if (!any && !s.hang_detection) {
    f.skipped = "every class is noticed at once (detection 0)";
    return f;
  }
  for (const double k : kFactors) {
    RunVariant v{factor_text(k), {}, false};
    for (std::size_t i = 0; i < s.faults.size(); ++i)
      if (s.faults[i].detection_us > 0)
        v.settings.push_back({"/faults/" + std::to_string(i) + "/detection", exact_duration(round_micros(static_cast<double>(s.faults[i].detection_us) * k))});
    if (s.hang_detection) {  // the watchdog sets the hangs' detection: its timeout scales instead
      v.settings.push_back({"/policies/hang_detection/factor", s.hang_detection->factor * k});
      if (s.hang_detection->minimum_us > 0)
        v.settings.push_back({"/policies/hang_detection/minimum", exact_duration(round_micros(static_cast<double>(s.hang_detection->minimum_us) * k))});
    }
    f.variants.push_back(std::move(v));
  }
  return f;
}

AssumedField restart_overhead(const Scenario& s) {
  // Each restart path the scenario can take, with its own cost: the relaunch always (the fallback),
  // in-process restart and the warm standby when in force. All scale together: one assumption,
  // how long a start takes on this cluster.
  std::vector<std::pair<std::string, Micros>> paths{{"/restart/overhead", s.restart_overhead_us}};
  const RestartMechanisms& m = s.restart;
  if (m.mechanism == RestartMechanism::InProcess && m.in_process_us >= 0) paths.emplace_back("/restart/in_process/overhead", m.in_process_us);
  if (m.mechanism != RestartMechanism::Relaunch && m.warm_standby_us >= 0) paths.emplace_back("/restart/warm_standby/overhead", m.warm_standby_us);
  std::string given = format_duration(micros_to_seconds(s.restart_overhead_us));
  if (paths.size() > 1) {
    given += " (";
    for (std::size_t i = 1; i < paths.size(); ++i)
      given += std::string(i > 1 ? ", " : "") + (paths[i].first.find("in_process") != std::string::npos ? "in process " : "warm standby ") +
               format_duration(micros_to_seconds(paths[i].second));
    given += ")";
  }
  AssumedField f{"restart overhead", paths.size() > 1 ? "/restart/overhead, /restart/*/overhead" : "/restart/overhead", given,
                 "x0.5 .. x2 of the scenario's",
                 "scheduling, image pulls and the collectives' start take minutes, and clusters differ by about twice either way", "", {}};
  if (std::all_of(paths.begin(), paths.end(), [](const auto& p) { return p.second <= 0; })) {
    f.skipped = "the scenario's restart overheads are 0";
    return f;
  }
  for (const double k : kFactors) {
    RunVariant v{paths.size() > 1 ? factor_text(k) : format_duration(micros_to_seconds(round_micros(static_cast<double>(s.restart_overhead_us) * k))),
                 {}, false};
    for (const auto& [pointer, us] : paths) v.settings.push_back({pointer, exact_duration(round_micros(static_cast<double>(us) * k))});
    f.variants.push_back(std::move(v));
  }
  return f;
}

}  // namespace

std::vector<AssumedField> assumed_fields(const nlohmann::json& document, const Scenario& scenario, const RunOptions& options) {
  const bool replaces = replaces_nodes(scenario);
  return {spare_nodes(scenario, replaces), repair_time(scenario, replaces), fleet_spread(document, scenario, options),
          rate_uncertainty(scenario, options), detection_times(scenario), restart_overhead(scenario)};
}

RunSensitivity run_sensitivity(const nlohmann::json& document, const std::string& file, const Scenario& scenario,
                               const RunOptions& options, const std::vector<double>& goodputs, const Summary& given) {
  RunSensitivity out;
  out.given = given;
  out.trials = options.trials;
  out.min = out.max = given.mean;
  double widest = 0;
  for (AssumedField& field : assumed_fields(document, scenario, options)) {
    RunSensitivityField f{std::move(field), {}, given.mean, given.mean, "", ""};
    f.lowest = f.highest = f.field.given;
    for (const RunVariant& v : f.field.variants) {
      RunSensitivityPoint point{v.value, {}, {}, ""};
      Scenario changed;
      try {
        changed = scenario_variant(document, file, v.settings);
      } catch (const ScenarioInvalid& e) {
        const ScenarioProblem& p = e.problems().front();
        point.excluded = p.pointer + ": " + p.reason;
        f.points.push_back(std::move(point));
        continue;
      }
      RunOptions o = options;
      o.keep_trials = o.keep_goodputs = o.tail = o.record_events = false;
      if (v.rates_exact) o.rate_uncertainty = false;
      // Paired on the trial index: the same seed, the same fault timeline (up to what the field changes).
      OnlineSummary value, difference;
      o.on_trial = [&](int index, const TrialResult& t) {
        const double g = goodput(t);
        value.add(g);
        difference.add(g - goodputs[static_cast<std::size_t>(index - options.first_trial)]);
      };
      run_trials(changed, o);
      point.goodput = value.summary();
      point.vs_given = difference.summary();
      if (point.goodput.mean < f.min) f.min = point.goodput.mean, f.lowest = v.value;
      if (point.goodput.mean > f.max) f.max = point.goodput.mean, f.highest = v.value;
      f.points.push_back(std::move(point));
    }
    out.min = std::min(out.min, f.min);
    out.max = std::max(out.max, f.max);
    if (f.max - f.min > widest) widest = f.max - f.min, out.most = f.field.field;
    out.fields.push_back(std::move(f));
  }
  return out;
}

}  // namespace ctwin
