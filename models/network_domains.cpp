#include "models/network_domains.hpp"

#include <algorithm>

#include "models/topology.hpp"

namespace ctwin {

std::int64_t component_count(const Scenario& s, const FaultClass& f) {
  switch (f.rate.component) {
    case Component::Node: return s.job.nodes;
    case Component::Gpu: return static_cast<std::int64_t>(s.job.nodes) * s.cluster.gpus_per_node;
    case Component::Leaf: return s.cluster.topology ? leaf_count(*s.cluster.topology) : 0;
    case Component::Spine: return s.cluster.topology ? s.cluster.topology->spines : 0;
    case Component::Cable: return s.cluster.topology ? cable_count(*s.cluster.topology) : 0;
    case Component::NvSwitch: return s.cluster.topology ? nvswitch_count(*s.cluster.topology) : 0;
  }
  return 0;
}

//! An NVLink switch tray serves every GPU of its domain: a crash (the fabric cannot route) takes
//! the domain's nodes out of the job; a slow one leaves them on less NVLink bandwidth.
NetworkDomain nvswitch_domain(const TopologySpec& t, int tray, Effect effect, int tracked) {
  NetworkDomain d;
  const int domain = tray / t.nvswitches_per_domain;
  auto& list = effect == Effect::Slow ? d.nodes_degraded : d.nodes_out;
  for (int n = domain * t.nvlink_domain_nodes; n < std::min({(domain + 1) * t.nvlink_domain_nodes, t.nodes, tracked}); ++n)
    list.push_back(n);
  return d;
}

NetworkDomains build_network_domains(const Scenario& s) {
  NetworkDomains out;
  out.per_class.resize(s.faults.size());
  bool any = false;
  for (const auto& f : s.faults) any |= is_network(f.rate.component);
  if (!any || !s.cluster.topology) return out;
  const Topology topology = Topology::build(*s.cluster.topology);
  const int tracked = s.job.nodes + s.cluster.spare_nodes;  // nodes beyond these belong to nobody here

  auto domain_of = [&](const BlastRadius& b, Effect effect) {
    NetworkDomain d;
    for (int n : b.nodes_down)
      if (n < tracked) d.nodes_out.push_back(n);
    for (const auto& [n, rail] : b.rails_lost) {
      if (n >= tracked) continue;
      auto& list = effect == Effect::Slow ? d.nodes_degraded : d.nodes_out;
      if (list.empty() || list.back() != n) list.push_back(n);
    }
    d.slows_everyone = b.cross_leaf_bandwidth_factor < 1.0;
    return d;
  };
  for (std::size_t c = 0; c < s.faults.size(); ++c) {
    const FaultClass& f = s.faults[c];
    if (!is_network(f.rate.component)) continue;
    auto& domains = out.per_class[c];
    const auto count = static_cast<int>(component_count(s, f));
    domains.reserve(static_cast<std::size_t>(count));
    for (int k = 0; k < count; ++k) {
      if (f.rate.component == Component::Leaf) domains.push_back(domain_of(topology.leaf_failure(k), f.effect));
      else if (f.rate.component == Component::Spine) domains.push_back(domain_of(topology.spine_failure(k), f.effect));
      else if (f.rate.component == Component::Cable) domains.push_back(domain_of(topology.cable_failure(k), f.effect));
      else domains.push_back(nvswitch_domain(*s.cluster.topology, k, f.effect, tracked));
    }
  }
  return out;
}

}  // namespace ctwin
