#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <unordered_map>

#include "sim/simgrid/comm_fabric.hpp"

namespace ctwin {

namespace {

enum class Port : std::uint8_t { NvLink, Nic, Uplink };

//! One direction of one link a route crosses, and the bandwidth factor it runs at.
struct Hop {
  std::int64_t key;
  double factor;
};

double factor_of(const std::map<int, double>& factors, int gpu) {
  const auto it = factors.find(gpu);
  return it == factors.end() ? 1.0 : it->second;
}

std::int64_t key(Port port, std::int64_t id, bool up) { return (static_cast<std::int64_t>(port) << 56) | (id << 1) | (up ? 1 : 0); }

//! The hops of a flow, as PhaseFabric routes it (its two builders agree on them).
std::vector<Hop> hops(const CommFabricSpec& f, const FabricState& s, const Flow& flow) {
  const int node_a = flow.src / f.gpus_per_node, node_b = flow.dst / f.gpus_per_node;
  if (node_a == node_b)
    return {{key(Port::NvLink, flow.src, true), factor_of(s.nvlink_factor, flow.src)},
            {key(Port::NvLink, flow.dst, false), factor_of(s.nvlink_factor, flow.dst)}};
  std::vector<Hop> out{{key(Port::Nic, flow.src, true), factor_of(s.nic_factor, flow.src)}};
  const int rail_a = flow.src % f.gpus_per_node, rail_b = flow.dst % f.gpus_per_node;
  if (f.nodes_per_leaf > 0) {
    const int leaf_a = node_a / f.nodes_per_leaf, leaf_b = node_b / f.nodes_per_leaf;
    if (rail_a != rail_b || leaf_a != leaf_b) {
      out.push_back({key(Port::Uplink, static_cast<std::int64_t>(leaf_a) * f.gpus_per_node + rail_a, true), s.uplink_factor});
      out.push_back({key(Port::Uplink, static_cast<std::int64_t>(leaf_b) * f.gpus_per_node + rail_b, false), s.uplink_factor});
    }
  }
  out.push_back({key(Port::Nic, flow.dst, false), factor_of(s.nic_factor, flow.dst)});
  return out;
}

std::size_t find(std::vector<std::size_t>& parent, std::size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

}  // namespace

std::vector<Flow> representative_flows(const CommFabricSpec& fabric, const FabricState& state, const std::vector<Flow>& flows) {
  const std::size_t n = flows.size();
  std::vector<std::vector<Hop>> routes(n);
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  std::unordered_map<std::int64_t, std::size_t> first_user;
  std::unordered_map<std::int64_t, int> users;
  for (std::size_t i = 0; i < n; ++i) {
    routes[i] = hops(fabric, state, flows[i]);
    for (const Hop& h : routes[i]) {
      ++users[h.key];
      const auto [it, added] = first_user.try_emplace(h.key, i);
      if (!added) parent[find(parent, i)] = find(parent, it->second);
    }
  }
  // A component's shape: each flow's bytes and, for each hop, its factor and how many flows of
  // the component share it. Components of one shape finish at the same time.
  std::map<std::size_t, std::vector<std::vector<double>>> shapes;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> shape{flows[i].bytes, static_cast<double>(routes[i].size())};
    for (const Hop& h : routes[i]) {
      shape.push_back(static_cast<double>(h.key >> 56));
      shape.push_back(h.factor);
      shape.push_back(users[h.key]);
    }
    shapes[find(parent, i)].push_back(std::move(shape));
  }
  std::map<std::vector<std::vector<double>>, std::size_t> representative;  // shape -> component root
  for (auto& [root, flow_shapes] : shapes) {
    std::sort(flow_shapes.begin(), flow_shapes.end());
    representative.try_emplace(std::move(flow_shapes), root);
  }
  std::vector<char> kept(n, 0);
  for (const auto& [shape, root] : representative) kept[root] = 1;
  std::vector<Flow> out;
  for (std::size_t i = 0; i < n; ++i)
    if (kept[find(parent, i)]) out.push_back(flows[i]);
  return out;
}

}  // namespace ctwin
