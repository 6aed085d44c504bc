#include "calibration/scenario_update.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <boost/math/distributions/normal.hpp>

#include "core/units.hpp"
#include "models/fault_catalog.hpp"
#include "models/xid_table.hpp"
#include "policies/robust_statistics.hpp"

namespace ctwin::calib {

std::string number(double x) {
  char out[32];
  std::snprintf(out, sizeof out, "%.6g", x);
  return out;
}

nlohmann::ordered_json interval_json(const Interval& i, double scale) {
  return {{"estimate", i.estimate * scale}, {"lower", i.lower * scale}, {"upper", i.upper * scale}};
}

double z_of_interval(double confidence) { return boost::math::quantile(boost::math::normal_distribution<double>(), 0.5 + confidence / 2); }

namespace {

constexpr double kHour = 3600;  //!< the trend evidence's clocks are in seconds

//! A fault class's name in a scenario document: its own, or that of the catalogue entry it uses.
std::string class_name(const nlohmann::ordered_json& fault) {
  return fault.contains("name") ? fault.value("name", "") : fault.value("use", "");
}

//! A class the traces name and the base lacks: only its rate is fitted. The built-in catalogue's
//! class when the Xid table names one; else how it strikes and how long it takes to recover are
//! placeholders by effect (and, for an Xid, NVIDIA's action), said so in its notes.
nlohmann::ordered_json new_class(const std::string& name, const std::string& effect, int xid) {
  const XidInfo* x = xid > 0 ? xid_info(xid) : nullptr;
  if (x && x->catalog_class && name == x->catalog_class) return {{"use", name}};
  nlohmann::ordered_json c{{"name", name}, {"effect", effect}};
  if (x && effect == "none") {  // an informational Xid: counted, it stops nothing
    c["detection"] = "0s";
    c["recovery"] = {{"action", "none"}, {"duration", "0s"}};
    c["notes"] = std::string("added by ctwin calibrate: Xid ") + std::to_string(xid) + ", " + x->what + ": counted only";
    return c;
  }
  if (effect == "slow") {
    c["speed_factor"] = 0.95;
    c["detection"] = "6h";
    c["recovery"] = {{"action", "none"}, {"duration", "1d"}};
  } else {
    c["detection"] = effect == "hang" ? "30min" : effect == "sdc" ? "2h" : "10s";  // NCCL's default watchdog for hangs
    c["recovery"] = {{"action", x ? to_string(x->action) : "reboot"}, {"duration", "10min"}};  // NVIDIA's action for an Xid
  }
  c["notes"] = "added by ctwin calibrate: the rate is fitted; detection, recovery" + std::string(effect == "slow" ? " and speed factor" : "") +
               " are placeholders to set";
  return c;
}

}  // namespace

//! Each fitted class into the scenario's faults (a class the base lacks is added with
//! placeholders), with its interval and provenance. Returns the names added.
nlohmann::ordered_json apply_class_fits(nlohmann::ordered_json& doc, const std::vector<ClassEstimate>& estimates, const CalibrateOptions& options) {
  bool installed_base = false;  //!< a shape was fitted on a fleet in mid-life
  auto& faults = doc["faults"];
  nlohmann::ordered_json added = nlohmann::ordered_json::array();
  for (const ClassEstimate& e : estimates) {
    if (e.count > 0 && !(e.exposure_hours > 0)) continue;  // no rate follows (the report says so)
    nlohmann::ordered_json* target = nullptr;
    for (auto& f : faults)
      if (class_name(f) == e.name) target = &f;
    if (!target && e.xid <= 0 && e.effect.empty()) continue;  // report only: no effect to simulate
    if (!target) {
      faults.push_back(new_class(e.name, e.effect.empty() ? "crash" : e.effect, e.xid));
      if (e.xid > 0 && !faults.back().contains("use")) faults.back()["xid"] = e.xid;
      target = &faults.back();
      added.push_back(e.name);
    }
    nlohmann::ordered_json cal{{"count", e.count}, {"exposure", number(e.exposure_hours) + " " + e.component + "-hours"},
                               {"rate_ci", {number(e.rate_per_hour.lower * kHoursPerYear) + "/" + e.component + "-year",
                                            number(e.rate_per_hour.upper * kHoursPerYear) + "/" + e.component + "-year"}},
                               {"confidence", options.confidence}, {"provenance", e.provenance}};
    if (e.count > 0) {
      (*target)["rate"] = number(e.rate_per_hour.estimate * kHoursPerYear) + "/" + e.component + "-year";
      // How sure the rate is, for the forecast's draws: the evidence itself, or, for a rate from a
      // Weibull mean life, the spread of its interval (a lognormal sigma).
      if (e.shape_trusted && !e.from_midlife && e.rate_per_hour.lower > 0)
        (*target)["rate_uncertainty"] = {{"sigma", std::min(3.0, std::log(e.rate_per_hour.upper / e.rate_per_hour.lower) / (2 * z_of_interval(options.confidence)))},
                                         {"source", "ctwin calibrate: the Weibull mean life's interval"}};
      else if (e.exposure_hours > 0)  // (a trace of instants has no exposure: no evidence to weigh)
        (*target)["rate_uncertainty"] = {{"events", e.count}, {"exposure", number(e.exposure_hours) + " " + e.component + "-hours"},
                                         {"source", "ctwin calibrate: the traces' count over their exposure"}};
    } else {
      if (!target->contains("rate")) (*target)["rate"] = "0/" + e.component + "-year";
      cal["note"] = "no faults observed: the rate is kept; the interval bounds it";
    }
    if (e.trend) {
      (*target)["trend"] = {{"shape", std::round(e.trend->shape * 1000) / 1000}, {"age", number(e.trend->age / kHour) + "h"},
                            {"source", "ctwin calibrate: a power law (Crow-AMSAA) over the traces' windows"}};
      // The evidence at the end's rate: as many events over the exposure that rate implies.
      if (target->contains("rate_uncertainty") && (*target)["rate_uncertainty"].contains("events"))
        (*target)["rate_uncertainty"]["exposure"] = number(e.exposure_hours / e.trend->end_factor) + " " + e.component + "-hours";
      cal["trend_shape"] = e.trend->shape;
    } else if (e.count > 0) {
      target->erase("trend");  // no trend the data support
    }
    if (e.lifetimes && e.shape_trusted && e.count > 0) {
      (*target)["distribution"] = "weibull";
      installed_base |= e.from_midlife;
      (*target)["weibull_shape"] = std::round(e.lifetimes->shape.estimate * 1000) / 1000;
      cal["weibull_shape_ci"] = {e.lifetimes->shape.lower, e.lifetimes->shape.upper};
    } else if (target->value("distribution", "") == "weibull" && e.count > 0) {
      target->erase("distribution");  // the data do not reject shape 1
      target->erase("weibull_shape");
    }
    (*target)["calibration"] = cal;
  }
  // That shape is the installed base's: the simulation starts its parts in mid-life. (Set after
  // the loop: adding a key may move `faults`.)
  if (installed_base) doc["simulation"]["part_ages"] = "stationary";
  return added;
}

//! The remap-to-RMA chain: the share of row remaps that failed (Xid 64 among 63s and 64s), into
//! the double-bit error class's `remap` (spare rows and the swap time are kept, or assumed).
void apply_row_remaps(nlohmann::ordered_json& doc, const Evidence& evidence, const CalibrateOptions& options,
                      nlohmann::ordered_json& report) {
  const auto& seen = evidence.row_remaps;
  const double attempts = seen.remapped + seen.failed;
  if (attempts <= 0) return;
  const Interval p = binomial_share(static_cast<std::size_t>(seen.failed), static_cast<std::size_t>(attempts), options.confidence);
  report["row_remaps"] = {{"remapped", seen.remapped}, {"failed", seen.failed}, {"failure_probability", interval_json(p)},
                          {"provenance", seen.provenance}};
  for (auto& f : doc["faults"]) {
    int xid = f.value("xid", -1);
    if (xid < 0 && f.contains("use") && f["use"].is_string())
      if (const auto* entry = catalog_entry(f["use"].get<std::string>())) xid = entry->value("xid", -1);
    if (xid != 48 || f.value("effect", std::string("crash")) != "crash") continue;
    nlohmann::ordered_json remap = f.contains("remap") ? f["remap"] : nlohmann::ordered_json::object();
    if (!remap.contains("spare_rows")) remap["spare_rows"] = 8;
    if (!remap.contains("replace_time")) remap["replace_time"] = "2min";
    remap["failure_probability"] = p.estimate;
    remap["source"] = "ctwin calibrate: " + number(seen.failed) + " of " + number(attempts) +
                      " row remaps failed in the kernel logs; spare_rows and replace_time kept from the base or assumed [A]";
    f["remap"] = remap;
    if (!f.contains("xid")) f["xid"] = 48;
  }
}

void apply_measured_restarts(nlohmann::ordered_json& doc, const Evidence& evidence, nlohmann::ordered_json& report) {
  const auto& measured = evidence.restarts;
  if (measured.by_path.empty()) return;
  int restarts = 0;
  for (const auto& [path, n] : measured.by_path) restarts += n;
  nlohmann::ordered_json& out = report["restarts"];
  out = {{"restarts", restarts}, {"by_path", measured.by_path}, {"ledger_seconds", measured.seconds}, {"provenance", measured.provenance}};
  if (measured.by_path.size() > 1) {
    out["note"] = "restarts of several paths: the ledger's restart time is not split by path, so no overhead is written";
    return;
  }
  const std::string& path = measured.by_path.begin()->first;
  const double mean_s = measured.seconds / restarts;
  out["mean_s"] = mean_s;
  nlohmann::ordered_json* target = &doc["restart"];
  if (path == "in_process" || path == "warm_standby") target = &(*target)[path];
  else if (path != "relaunch") {
    out["note"] = "restarts by a path no scenario field holds (\"" + path + "\"): no overhead is written";
    return;
  }
  (*target)["overhead"] = number(mean_s) + "s";
  (*target)["source"] = "[M] ctwin calibrate: " + std::to_string(restarts) + " " + path +
                        " restarts in the traces (the ledger's restart less the start-up, over the restarts)";
}

//! The repair shop from the repairs seen: a fixed turnaround, or a lognormal.
void apply_repairs(nlohmann::ordered_json& doc, const std::optional<LognormalFit>& repair) {
  const std::string repairs_seen = "ctwin calibrate: " + (repair ? std::to_string(repair->n) : "") + " repairs in the traces";
  if (repair && std::round(repair->sigma.estimate * 1000) == 0) {
    // Every repair took the same time (a fixed turnaround): no spread to fit.
    doc["spares"].erase("repair");
    doc["spares"]["repair_time"] = number(repair->median * 3600) + "s";
    doc["spares"]["source"] = repairs_seen + ", all of one duration";
  } else if (repair) {
    doc["spares"].erase("repair_time");
    doc["spares"]["repair"] = {{"distribution", "lognormal"},
                               {"median", number(repair->median * 3600) + "s"},
                               {"sigma", std::round(repair->sigma.estimate * 1000) / 1000},
                               {"source", repairs_seen}};
  }
}

//! The step log's slow nodes into the scenario: a class of slow faults per node (`slow_node`) at
//! their median speed, whose share of nodes slow at a time is the log's (rate x duration = share).
//! A node slow through the log stays so for an unknown time past it: the duration is the base
//! class's, else a day (at least the log's window), said in the notes. Only among peers: a log that
//! names no stage or role compares a pipeline's long last stage with the rest, and its "slow nodes"
//! may be that stage; they are reported, not written, unless the user says the nodes do alike work.
void apply_slow_nodes(nlohmann::ordered_json& doc, const StepTimeFit& steps, const std::vector<std::string>& sources,
                      const CalibrateOptions& options, nlohmann::ordered_json& report) {
  if (steps.nodes < 3 || steps.node_hours <= 0) return;
  constexpr const char* kClass = "slow_node";
  auto& said = report["step_times"]["scenario"];
  said = {{"class", kClass}, {"written", false}};
  if (steps.peer_groups == 0 && !options.slow_nodes_without_stages) {
    said["why"] = "the log names no stage or role, so a node on a longer stage would read as slow: the suspects are reported, "
                  "not written (--slow-nodes-without-stages writes them)";
    return;
  }
  nlohmann::ordered_json* target = nullptr;
  for (auto& f : doc["faults"])
    if (class_name(f) == kClass) target = &f;
  const auto slow = static_cast<double>(steps.slow_nodes.size());
  if (slow == 0 && !target) {
    said["why"] = "no slow node among " + std::to_string(steps.nodes) + " nodes";
    return;
  }
  const double window_h = steps.node_hours / static_cast<double>(steps.nodes);
  double lasts_h = std::max(window_h, 24.0);
  if (target && target->contains("recovery") && (*target)["recovery"].value("duration", nlohmann::ordered_json()).is_string()) {
    std::string why;
    if (const auto d = parse_duration_s((*target)["recovery"]["duration"].get<std::string>(), why); d && *d > 0) lasts_h = std::max(window_h, *d / 3600);
  }
  if (!target) {
    std::vector<double> speeds;
    for (const SlowNode& n : steps.slow_nodes) speeds.push_back(n.speed_factor);
    doc["faults"].push_back({{"name", kClass},
                             {"effect", "slow"},
                             {"speed_factor", std::clamp(median_of(speeds), kSlowestSpeed, 0.999)},
                             {"detection", "0s"},
                             {"recovery", {{"action", "none"}, {"duration", number(lasts_h * 3600) + "s"}}},
                             {"notes", "added by ctwin calibrate from step times: a node that runs slow among its peers; the rate holds the "
                                       "log's share of slow nodes over the duration, a placeholder (a day, or the log's window if longer) "
                                       "to set to how long a slow node stays in a job here; the straggler policy decides its eviction"}});
    target = &doc["faults"].back();
  }
  // As many onsets as slow nodes, each node watched for one duration: the share is rate x duration.
  const double exposure_h = static_cast<double>(steps.nodes) * lasts_h;
  const Interval rate = poisson_rate(slow, exposure_h, options.confidence);
  const std::string exposure = number(exposure_h) + " node-hours";
  (*target)["rate"] = number(rate.estimate * kHoursPerYear) + "/node-year";
  (*target)["rate_uncertainty"] = {{"events", slow}, {"exposure", exposure}, {"source", "ctwin calibrate: the step log's slow nodes, each node watched for the class's duration"}};
  (*target)["calibration"] = {{"count", slow}, {"exposure", exposure},
                              {"rate_ci", {number(rate.lower * kHoursPerYear) + "/node-year", number(rate.upper * kHoursPerYear) + "/node-year"}},
                              {"confidence", options.confidence}, {"provenance", sources}};
  said["written"] = true;
  said["why"] = steps.peer_groups > 0 ? "each node compared with its stage and role" : "--slow-nodes-without-stages: every node compared with every node";
}

}  // namespace ctwin::calib
