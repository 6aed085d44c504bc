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

//! The ports and uplinks of the GPUs a phase uses, and a route for each flow.
class PhaseFabric {
 public:
  PhaseFabric(const CommFabricSpec& spec, const FabricState& state, const std::vector<Flow>& flows)
      : spec_(spec), state_(state), zone_(sg4::create_full_zone("fabric")) {
    std::set<std::pair<int, int>> routed;
    for (const Flow& f : flows) {
      if (f.src == f.dst || !routed.insert({f.src, f.dst}).second) continue;
      zone_->add_route(host(f.src)->get_netpoint(), host(f.dst)->get_netpoint(), nullptr, nullptr, route(f.src, f.dst), false);
    }
    zone_->seal();
    for (sg4::Link* dead : dead_) dead->turn_off();
  }
  sg4::Host* host(int gpu) {
    auto [it, added] = hosts_.try_emplace(gpu, nullptr);
    if (added) it->second = zone_->create_host("gpu-" + std::to_string(gpu), 1e12)->seal();
    return it->second;
  }

 private:
  int node_of(int gpu) const { return gpu / spec_.gpus_per_node; }
  int rail_of(int gpu) const { return gpu % spec_.gpus_per_node; }
  int leaf_of(int gpu) const { return spec_.nodes_per_leaf > 0 ? node_of(gpu) / spec_.nodes_per_leaf : 0; }

  sg4::Link* port(std::map<int, sg4::Link*>& ports, const std::map<int, double>& factors, const char* kind, int gpu,
                  double bytes_per_s, double latency_s) {
    auto [it, added] = ports.try_emplace(gpu, nullptr);
    if (!added) return it->second;
    const auto f = factors.find(gpu);
    const double factor = f == factors.end() ? 1.0 : f->second;
    it->second = zone_->create_split_duplex_link(std::string(kind) + "-" + std::to_string(gpu), bytes_per_s * std::max(factor, 1e-9))
                     ->set_latency(latency_s)
                     ->seal();
    if (factor <= 0) dead_.push_back(it->second);
    return it->second;
  }
  sg4::Link* uplink(int leaf, int rail) {
    const int key = leaf * spec_.gpus_per_node + rail;
    auto [it, added] = uplinks_.try_emplace(key, nullptr);
    if (added) {
      const double bw = spec_.nodes_per_leaf * spec_.nic_bytes_per_s / spec_.oversubscription;
      it->second = zone_->create_split_duplex_link("uplink-" + std::to_string(leaf) + "-" + std::to_string(rail), bw)
                       ->set_latency(spec_.nic_latency_s)
                       ->seal();
    }
    return it->second;
  }
  std::vector<sg4::LinkInRoute> route(int a, int b) {
    if (node_of(a) == node_of(b))
      return {{port(nvlink_, state_.nvlink_factor, "nvlink", a, spec_.nvlink_bytes_per_s, spec_.nvlink_latency_s), Direction::UP},
              {port(nvlink_, state_.nvlink_factor, "nvlink", b, spec_.nvlink_bytes_per_s, spec_.nvlink_latency_s), Direction::DOWN}};
    std::vector<sg4::LinkInRoute> links{
        {port(nic_, state_.nic_factor, "nic", a, spec_.nic_bytes_per_s, spec_.nic_latency_s), Direction::UP}};
    // Same rail, same leaf: one switch hop. Otherwise up through the spines and down again.
    if (rail_of(a) != rail_of(b) || leaf_of(a) != leaf_of(b)) {
      links.push_back({uplink(leaf_of(a), rail_of(a)), Direction::UP});
      links.push_back({uplink(leaf_of(b), rail_of(b)), Direction::DOWN});
    }
    links.push_back({port(nic_, state_.nic_factor, "nic", b, spec_.nic_bytes_per_s, spec_.nic_latency_s), Direction::DOWN});
    return links;
  }

  const CommFabricSpec& spec_;
  const FabricState& state_;
  sg4::NetZone* zone_;
  std::map<int, sg4::Host*> hosts_;
  std::map<int, sg4::Link*> nvlink_, nic_, uplinks_;
  std::vector<sg4::Link*> dead_;
};

}  // namespace

PhaseResult simulate_phase(const CommFabricSpec& fabric, const FabricState& state, const std::vector<Flow>& all_flows,
                           double timeout_s) {
  std::vector<Flow> flows;  // a GPU sending to itself moves nothing
  for (const Flow& f : all_flows)
    if (f.src != f.dst) flows.push_back(f);
  if (flows.empty()) return {};
  const std::string answer = run_in_child(
      [&](int fd) {
        init_simgrid_engine();
        PhaseFabric platform(fabric, state, flows);
        double last = 0;
        bool hung = false;
        static int payload = 0;
        for (std::size_t i = 0; i < flows.size(); ++i) {
          const Flow f = flows[i];
          sg4::Mailbox* box = sg4::Mailbox::by_name("flow-" + std::to_string(i));
          sg4::Actor::create("send-" + std::to_string(i), platform.host(f.src), [box, f, timeout_s, &hung] {
            try {
              box->put_async(&payload, static_cast<std::uint64_t>(std::max(1.0, f.bytes)))->wait_for(timeout_s);
            } catch (const simgrid::Exception&) {
              hung = true;
            }
          });
          sg4::Actor::create("recv-" + std::to_string(i), platform.host(f.dst), [box, timeout_s, &hung, &last] {
            try {
              int* data = nullptr;
              box->get_async<int>(&data)->wait_for(timeout_s);
              last = std::max(last, sg4::Engine::get_clock());
            } catch (const simgrid::Exception&) {
              hung = true;
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
