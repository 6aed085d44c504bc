#include "calibration/fleet_pooling.hpp"

#include <algorithm>
#include <cmath>

#include "calibration/scenario_update.hpp"

namespace ctwin::calib {

namespace {

constexpr double kMostSigma = 3;  //!< the most a scenario's sigma takes (models/faults_loader.cpp)
constexpr double kDaysPerYear = kSecondsPerYear / 86400;  //!< as "-year" rates are read back

//! Component-days of `from` as component-days of `to` (a node holds gpus_per_node GPUs).
double in_units_of(double days, Component from, Component to, int gpus) {
  if (from == to) return days;
  return from == Component::Gpu ? days / gpus : days * gpus;
}

std::string class_name(const nlohmann::ordered_json& fault) { return fault.contains("name") ? fault.value("name", "") : fault.value("use", ""); }

}  // namespace

FleetCovariates covariates_of(const Scenario& scenario) {
  FleetCovariates x;
  // A GPU's "80 GB" is 80 GiB: the fleets' table holds the nominal figure, a scenario the bytes.
  if (scenario.cluster.gpu_memory_bytes > 0) x.hbm_gb = scenario.cluster.gpu_memory_bytes / static_cast<double>(1ull << 30);
  return x;
}

bool apply_population_prior(nlohmann::ordered_json& doc, const Scenario& base, const std::vector<ClassEstimate>& estimates,
                            const PopulationPrior& prior, const std::string& prior_file, nlohmann::ordered_json& report) {
  const int gpus = std::max(1, base.cluster.gpus_per_node);
  struct Member {
    const FaultClass* fc;
    double base_rate;  //!< per component-day of the group
    const ClassEstimate* seen = nullptr;
    double share = 0;
  };
  std::array<std::vector<Member>, kClassGroups> members;
  for (const FaultClass& fc : base.faults) {
    if (!fc.group || is_network(fc.rate.component)) continue;  // a fabric part's exposure is not a node's
    const ClassGroup g = *fc.group;
    Member m{&fc, in_units_of(fc.rate.per_component_second * 86400, group_component(g), fc.rate.component, gpus)};
    // (a rate per GPU-day is a rate per node-day over the node's GPUs: the inverse of exposures' map)
    for (const ClassEstimate& e : estimates)
      if (e.name == fc.name && e.exposure_hours > 0) m.seen = &e;
    members[static_cast<int>(g)].push_back(m);
  }
  if (std::all_of(members.begin(), members.end(), [](const auto& v) { return v.empty(); })) return false;

  // Each group's evidence: its seen classes' faults, over each seen class's exposure weighted by its
  // share of the group (the Poisson mean is the group's rate times that sum): a kernel log sees
  // Xids, not thermal trips, and two traces may watch two classes for different times.
  FleetCounts counts{};
  std::array<double, kClassGroups> seen_share{};
  for (int g = 0; g < kClassGroups; ++g) {
    auto& list = members[g];
    double total = 0, exposure = 0, count = 0, share = 0;
    for (const Member& m : list) total += m.base_rate;
    for (Member& m : list) {
      m.share = total > 0 ? m.base_rate / total : 1.0 / static_cast<double>(list.size());
      if (!m.seen) continue;
      const Component component = m.fc->rate.component;
      exposure += m.share * in_units_of(m.seen->exposure_hours / 24, component, group_component(static_cast<ClassGroup>(g)), gpus);
      count += m.seen->count;
      share += m.share;
    }
    seen_share[g] = share;
    counts[g] = {count, exposure};
  }
  const FleetCovariates x = covariates_of(base);
  const FleetPosterior post = fleet_posterior(prior, x, counts);

  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  std::vector<std::string> clipped;
  for (int g = 0; g < kClassGroups; ++g) {
    auto& list = members[g];
    if (list.empty()) continue;
    const auto group = static_cast<ClassGroup>(g);
    const GroupRate& r = post.groups[g];
    // Shares: the base's, moved by the fleet's own split when the traces see every class of the group
    // (a Dirichlet with the base's events, or ten, as its weight).
    const bool all_seen = std::all_of(list.begin(), list.end(), [](const Member& m) { return m.seen != nullptr; });
    double weight = 0;
    for (const Member& m : list) weight += m.fc->uncertainty && m.fc->uncertainty->events ? *m.fc->uncertainty->events : 0;
    if (!(weight > 0)) weight = 10;
    const std::string unit = to_string(group_component(group));
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const Member& m : list) {
      const double share = all_seen && counts[g].count > 0 ? (weight * m.share + m.seen->count) / (weight + counts[g].count) : m.share;
      const Component component = m.fc->rate.component;
      // The class's rate per its own component-day: the group's median times its share.
      const double per_day = in_units_of(share * r.median_per_day, component, group_component(group), gpus);
      for (auto& f : doc["faults"]) {
        if (class_name(f) != m.fc->name) continue;
        const std::string own_unit = to_string(component);
        f["rate"] = number(per_day * kDaysPerYear) + "/" + own_unit + "-year";
        // A scenario's sigma is at most 3 (a factor of 20 at one sigma): a wider posterior is cut there, and said.
        if (r.own_sigma > kMostSigma || r.fleet_sigma > kMostSigma) clipped.push_back(to_string(group));
        f["rate_uncertainty"] = {
            {"sigma", std::round(std::min(r.own_sigma, kMostSigma) * 10000) / 10000},
            {"fleet_sigma", std::round(std::min(r.fleet_sigma, kMostSigma) * 10000) / 10000},
            {"prior", prior.name},
            {"fleet_exposure", number(counts[g].exposure_days) + " " + unit + "-days"},
            {"source", "ctwin calibrate: the fleet's " + number(counts[g].count) + " " + to_string(group) + " faults over " +
                           number(counts[g].exposure_days) + " " + unit + "-days pooled with the population prior \"" + prior.name +
                           "\"; this class's share of its group " + number(share)}};
        f.erase("trend");  // the pooled rate is the window's level
        auto& cal = f["calibration"];
        cal["pooled"] = {{"group", to_string(group)},
                         {"share", share},
                         {"rate_p05", number(in_units_of(share * r.p05_per_day, component, group_component(group), gpus) * kDaysPerYear) + "/" + own_unit + "-year"},
                         {"rate_p95", number(in_units_of(share * r.p95_per_day, component, group_component(group), gpus) * kDaysPerYear) + "/" + own_unit + "-year"}};
      }
      classes.push_back({{"class", m.fc->name}, {"share", share}, {"seen", m.seen != nullptr}});
    }
    groups.push_back({{"group", to_string(group)},
                      {"observed", r.observed},
                      {"count", counts[g].count},
                      {"exposure_" + unit + "_days", counts[g].exposure_days},
                      {"seen_share", seen_share[g]},
                      {"rate_per_1000_" + unit + "_days", {{"median", r.median_per_day * 1000}, {"p05", r.p05_per_day * 1000}, {"p95", r.p95_per_day * 1000}}},
                      {"fleet_sigma", r.fleet_sigma},
                      {"own_sigma", r.own_sigma},
                      {"classes", classes}});
  }
  report["pooling"] = {{"prior", prior.name},
                       {"prior_file", prior_file},
                       {"hbm_gb", x.hbm_gb},
                       {"fleet_factor", {{"median", post.fleet_factor_median}, {"p05", post.fleet_factor_p05}, {"p95", post.fleet_factor_p95}}},
                       {"effective_samples", post.effective_samples},
                       {"samples", post.samples},
                       {"groups", groups}};
  std::string warning;
  if (!clipped.empty()) {
    std::string names;
    for (const auto& g : clipped) names += (names.empty() ? "" : ", ") + g;
    warning = "the posterior of " + names + " spreads wider than a scenario's sigma of 3 holds: written as 3 (narrower than it is)";
  }
  if (post.effective_samples < 200)
    warning += std::string(warning.empty() ? "" : "; ") + "the posterior rests on " + number(post.effective_samples) +
               " effective samples: the fleet's counts are far from anything the prior expects; check the traces' exposure";
  if (!warning.empty()) report["pooling"]["warning"] = warning;
  doc["calibration"]["prior"] = {{"name", prior.name},
                                 {"content_hash", prior.content_hash},
                                 {"fleet_factor", {{"median", post.fleet_factor_median}, {"p05", post.fleet_factor_p05}, {"p95", post.fleet_factor_p95}}}};
  return true;
}

}  // namespace ctwin::calib
