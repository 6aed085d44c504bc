#pragma once
//! Which of the job's nodes a network fault takes away, per fault class and per component (each
//! leaf, spine or cable, read off the topology graph once per scenario; each NVLink switch tray,
//! whose domain is the nodes it joins). A node that loses every
//! uplink always leaves the job; one that loses a rail leaves it when the class's effect is a
//! crash (NCCL errors), or slows the job when the effect is slow (NCCL runs on fewer rails).

#include <cstdint>
#include <vector>

#include "models/scenario.hpp"

namespace ctwin {

struct NetworkDomain {
  std::vector<std::int32_t> nodes_out;       //!< must leave the job until the part is back
  std::vector<std::int32_t> nodes_degraded;  //!< lost a rail: the job slows if one of them is in it
  bool slows_everyone = false;               //!< a spine: less bisection bandwidth for all
};

struct NetworkDomains {
  //! Indexed like the scenario's faults; empty for GPU and node classes.
  std::vector<std::vector<NetworkDomain>> per_class;
};

//! Components a class strikes: GPUs or nodes of the job, or every leaf, spine or cable of the fabric.
std::int64_t component_count(const Scenario& scenario, const FaultClass& fault);

NetworkDomains build_network_domains(const Scenario& scenario);

}  // namespace ctwin
