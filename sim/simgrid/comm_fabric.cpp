#include "sim/simgrid/comm_fabric.hpp"

#include <algorithm>
#include <set>
#include <string>

#include <simgrid/s4u.hpp>

#include "sim/simgrid/platform.hpp"
#include "sim/simgrid/subprocess.hpp"

namespace sg4 = simgrid::s4u;

namespace ctwin {

namespace {

using Direction = sg4::LinkInRoute::Direction;

//! The ports and uplinks of the GPUs a phase uses, and a route for each flow. A phase whose flows
//! all cross nodes is built as star zones, one per rail leaf, under a star of uplinks: routes are
//! implicit and memory is linear in the GPUs (a full routing table is quadratic: 2 GB at 16k GPUs).
//! Phases that stay inside nodes, or mix both, are small and get a full zone with explicit routes.
class PhaseFabric {
 public:
  PhaseFabric(const CommFabricSpec& spec, const FabricState& state, const std::vector<Flow>& flows)
      : spec_(spec), state_(state) {
    const bool all_across = std::all_of(flows.begin(), flows.end(), [&](const Flow& f) { return node_of(f.src) != node_of(f.dst); });
    if (all_across) build_rail_leaves(flows);
    else build_full(flows);
    for (sg4::Link* dead : dead_) dead->turn_off();
  }
  sg4::Host* host(int gpu) const { return hosts_.at(gpu); }

 private:
  int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }
  int rail_of(int gpu) const { return gpu % spec_.gpus_per_node; }
  int leaf_of(int gpu) const { return spec_.nodes_per_leaf > 0 ? node_of(gpu) / spec_.nodes_per_leaf : 0; }
  double factor(const std::map<int, double>& factors, int gpu) const {
    const auto f = factors.find(gpu);
    return f == factors.end() ? 1.0 : f->second;
  }
  sg4::Link* link(sg4::NetZone* zone, const std::string& name, double bytes_per_s, double latency_s, double f) {
    sg4::Link* l = zone->create_split_duplex_link(name, bytes_per_s * std::max(f, 1e-9))->set_latency(latency_s)->seal();
    if (f <= 0) dead_.push_back(l);
    return l;
  }
  sg4::Link* nic(sg4::NetZone* zone, int gpu) {
    auto [it, added] = nic_.try_emplace(gpu, nullptr);
    if (added)
      it->second = link(zone, "nic-" + std::to_string(gpu), spec_.nic_bytes_per_s, spec_.nic_latency_s, factor(state_.nic_factor, gpu));
    return it->second;
  }
  sg4::Link* nvlink(sg4::NetZone* zone, int gpu) {
    auto [it, added] = nvlink_.try_emplace(gpu, nullptr);
    if (added)
      it->second = link(zone, "nvlink-" + std::to_string(gpu), spec_.nvlink_bytes_per_s, spec_.nvlink_latency_s,
                        factor(state_.nvlink_factor, gpu));
    return it->second;
  }
  double uplink_bytes_per_s() const { return std::max(1, spec_.nodes_per_leaf) * spec_.nic_bytes_per_s / spec_.oversubscription; }

  void build_rail_leaves(const std::vector<Flow>& flows) {
    auto* top = sg4::create_star_zone("spines");
    std::map<std::pair<int, int>, std::pair<sg4::NetZone*, simgrid::kernel::routing::NetPoint*>> leaves;  // (leaf, rail) -> zone, gateway
    std::set<int> gpus;
    for (const Flow& f : flows) gpus.insert({f.src, f.dst});
    for (int gpu : gpus) {
      const std::pair<int, int> key{leaf_of(gpu), rail_of(gpu)};
      auto [it, added] = leaves.try_emplace(key, nullptr, nullptr);
      if (added) {
        const std::string name = "leaf-" + std::to_string(key.first) + "-" + std::to_string(key.second);
        auto* zone = sg4::create_star_zone(name)->set_parent(top);
        it->second = {zone, zone->create_router(name + "-switch")};
        zone->add_route(it->second.second, nullptr, nullptr, nullptr, {}, true);
      }
      auto* zone = it->second.first;
      sg4::Host* h = zone->create_host("gpu-" + std::to_string(gpu), 1e12)->seal();
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{nic(zone, gpu), Direction::UP}}, true);
      hosts_[gpu] = h;
    }
    // Only with spines: every leaf's uplink; a lone leaf is the whole rail.
    for (auto& [key, leaf] : leaves) {
      const bool spine = spec_.nodes_per_leaf > 0;
      std::vector<sg4::LinkInRoute> up;
      if (spine)
        up.push_back({link(top, "uplink-" + std::to_string(key.first) + "-" + std::to_string(key.second), uplink_bytes_per_s(),
                           spec_.nic_latency_s, state_.uplink_factor),
                      Direction::UP});
      top->add_route(leaf.first->get_netpoint(), nullptr, leaf.second, nullptr, up, true);
      leaf.first->seal();
    }
    top->seal();
  }

  void build_full(const std::vector<Flow>& flows) {
    auto* zone = sg4::create_full_zone("fabric");
    std::set<int> gpus;
    for (const Flow& f : flows) gpus.insert({f.src, f.dst});
    for (int gpu : gpus) hosts_[gpu] = zone->create_host("gpu-" + std::to_string(gpu), 1e12)->seal();
    std::set<std::pair<int, int>> routed;
    for (const Flow& f : flows)
      if (routed.insert({f.src, f.dst}).second)
        zone->add_route(hosts_[f.src]->get_netpoint(), hosts_[f.dst]->get_netpoint(), nullptr, nullptr, route(zone, f.src, f.dst), false);
    zone->seal();
  }
  std::vector<sg4::LinkInRoute> route(sg4::NetZone* zone, int a, int b) {
    if (node_of(a) == node_of(b)) return {{nvlink(zone, a), Direction::UP}, {nvlink(zone, b), Direction::DOWN}};
    std::vector<sg4::LinkInRoute> links{{nic(zone, a), Direction::UP}};
    // Same rail, same leaf: one switch hop. Otherwise up through the spines and down again (with
    // no spine layer, as build_rail_leaves routes it: port to port).
    if (spec_.nodes_per_leaf > 0 && (rail_of(a) != rail_of(b) || leaf_of(a) != leaf_of(b))) {
      links.push_back({uplink(zone, leaf_of(a), rail_of(a)), Direction::UP});
      links.push_back({uplink(zone, leaf_of(b), rail_of(b)), Direction::DOWN});
    }
    links.push_back({nic(zone, b), Direction::DOWN});
    return links;
  }
  sg4::Link* uplink(sg4::NetZone* zone, int leaf, int rail) {
    auto [it, added] = uplinks_.try_emplace(leaf * spec_.gpus_per_node + rail, nullptr);
    if (added)
      it->second = link(zone, "uplink-" + std::to_string(leaf) + "-" + std::to_string(rail), uplink_bytes_per_s(), spec_.nic_latency_s, state_.uplink_factor);
    return it->second;
  }

  const CommFabricSpec& spec_;
  const FabricState& state_;
  std::map<int, sg4::Host*> hosts_;
  std::map<int, sg4::Link*> nvlink_, nic_, uplinks_;
  std::vector<sg4::Link*> dead_;
};

}  // namespace

PhaseResult simulate_phase(const CommFabricSpec& fabric, const FabricState& state, const std::vector<Flow>& all_flows,
                           double timeout_s) {
  std::vector<Flow> moving;  // a GPU sending to itself moves nothing
  for (const Flow& f : all_flows)
    if (f.src != f.dst) moving.push_back(f);
  if (moving.empty()) return {};
  const std::vector<Flow> flows = representative_flows(fabric, state, moving);
  const std::string answer = run_in_child(
      [&](int fd) {
        init_simgrid_engine();
        PhaseFabric platform(fabric, state, flows);
        double last = 0;
        bool hung = false;
        static int payload = 0;
        // One actor per GPU, with every flow it sends and receives: actors per flow would double
        // the actors (and their stack mappings) for nothing.
        std::map<int, std::vector<std::pair<std::size_t, double>>> sends;
        std::map<int, std::vector<std::size_t>> receives;
        for (std::size_t i = 0; i < flows.size(); ++i) {
          sends[flows[i].src].emplace_back(i, flows[i].bytes);
          receives[flows[i].dst].push_back(i);
        }
        std::set<int> gpus;
        for (const Flow& f : flows) gpus.insert({f.src, f.dst});
        for (int gpu : gpus) {
          sg4::Actor::create("gpu-" + std::to_string(gpu), platform.host(gpu),
                             [out = sends[gpu], in = receives[gpu], timeout_s, &hung, &last] {
                               std::vector<sg4::CommPtr> comms;
                               std::vector<int*> data(in.size(), nullptr);
                               try {
                                 for (const auto& [flow, bytes] : out)
                                   comms.push_back(sg4::Mailbox::by_name("flow-" + std::to_string(flow))
                                                       ->put_async(&payload, static_cast<std::uint64_t>(std::max(1.0, bytes))));
                                 for (std::size_t k = 0; k < in.size(); ++k)
                                   comms.push_back(sg4::Mailbox::by_name("flow-" + std::to_string(in[k]))->get_async<int>(&data[k]));
                                 for (const auto& c : comms) {
                                   c->wait_for(std::max(0.0, timeout_s - sg4::Engine::get_clock()));
                                 }
                                 if (!in.empty()) last = std::max(last, sg4::Engine::get_clock());
                               } catch (const simgrid::Exception&) {
                                 hung = true;
                                 for (const auto& c : comms)
                                   if (c->get_state() != sg4::Activity::State::FINISHED) c->cancel();
                               }
                             });
        }
        sg4::Engine::get_instance()->run();
        ByteWriter out;
        out.put(hung ? timeout_s : last);
        out.put(hung);
        write_all(fd, out.bytes);
      },
      "collective phase");
  ByteReader in(answer);
  PhaseResult r;
  r.seconds = in.get<double>();
  r.hung = in.get<bool>();
  return r;
}

}  // namespace ctwin
