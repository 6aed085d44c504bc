#include "sim/simgrid/simgrid_driver.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>

#include <simgrid/s4u.hpp>

#include "core/rng.hpp"
#include "models/topology.hpp"
#include "sim/simgrid/platform.hpp"
#include "sim/simgrid/subprocess.hpp"

namespace sg4 = simgrid::s4u;

namespace ctwin {
namespace {

//! Shared between the two actors of one trial (one process, one trial).
struct TrialWorld {
  const TrialConfig* config;
  const FaultTimelineModel* faults;
  const Platform* platform;
  const std::vector<double>* pstates;
  std::uint64_t seed;
  bool record;
  std::deque<FaultStrike> inbox;
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr strike_arrived = sg4::ConditionVariable::create();
  TrialResult result;
  std::vector<RunEvent> events;
};

double to_simgrid_time(Micros us) { return micros_to_seconds(us); }

//! Mirrors what the trial says about nodes onto their hosts; keeps trial 0's events.
//! Every crash or hang turns its victim's host off: the rank is dead. A node the trial takes down
//! (reboot, replacement, a failed switch) comes back on when the trial says so; any other crashed
//! rank comes back when the job's restart completes (process restart, GPU reset, or a node kept
//! by a misdiagnosis).
class HostMirror final : public TrialObserver {
 public:
  explicit HostMirror(TrialWorld& world) : world_(world) {}
  void on_event(const RunEvent& e) override {
    if (world_.record) world_.events.push_back(e);
    if ((e.kind == EventKind::Fault || e.kind == EventKind::FaultIgnored) && e.component >= 0) {
      network_part_down(e);
      return;
    }
    if (e.kind == EventKind::RestoreBegin) {
      for (int node : rank_down_)
        if (!node_down_.count(node)) host(node)->turn_on();
      rank_down_.clear();
      return;
    }
    if (e.node < 0) return;
    switch (e.kind) {
      case EventKind::Fault: {
        const FaultClass& fc = world_.config->faults[static_cast<std::size_t>(e.fault_class)];
        if (fc.effect != Effect::Crash && fc.effect != Effect::Hang) break;  // slow, flap, sdc, none: the host runs on
        host(e.node)->turn_off();
        rank_down_.insert(e.node);  // back at the restart, unless the node itself goes down
        break;
      }
      case EventKind::NodeDown:
        node_down_.insert(e.node);
        host(e.node)->turn_off();
        break;
      case EventKind::NodeUp:
        node_down_.erase(e.node);
        rank_down_.erase(e.node);
        host(e.node)->turn_on();
        break;
      case EventKind::SlowBegin:
      case EventKind::SlowEnd: {
        if (e.speed <= 0.0) break;  // a stall (link flap) is the network's, not the node's speed
        const auto& p = *world_.pstates;
        host(e.node)->set_pstate(static_cast<unsigned long>(std::find(p.begin(), p.end(), e.speed) - p.begin()));
        break;
      }
      default: break;
    }
  }
  bool wants_checkpoints() const override { return world_.record; }

 private:
  //! A leaf, spine or cable failed: its links go off, and come back on when it is replaced.
  void network_part_down(const RunEvent& e) {
    const FaultClass& fc = world_.config->faults[static_cast<std::size_t>(e.fault_class)];
    const Platform& p = *world_.platform;
    const auto& table = fc.rate.component == Component::Leaf ? p.leaf_links
                        : fc.rate.component == Component::Spine ? p.spine_links : p.cable_links;
    if (static_cast<std::size_t>(e.component) >= table.size()) return;  // no graph-built platform
    std::vector<sg4::Link*> links = table[static_cast<std::size_t>(e.component)];
    for (sg4::Link* l : links)
      if (links_down_[l]++ == 0) l->turn_off();
    const double back = to_simgrid_time(e.time + fc.detection_us + fc.diagnosis_us + fc.action_us);
    sg4::Actor::create("repair-crew", p.control, [this, links, back] {
      sg4::this_actor::sleep_until(back);
      for (sg4::Link* l : links)
        if (--links_down_[l] == 0) l->turn_on();
    })->daemonize();
  }

  sg4::Host* host(int node) const { return world_.platform->nodes[static_cast<std::size_t>(node)]; }
  std::map<sg4::Link*, int> links_down_;  //!< parts out that hold each link down
  TrialWorld& world_;
  std::set<int> node_down_, rank_down_;
};

//! The fault injector: sleeps until each fault of the trial's timeline and hands it to the master.
void fault_injector(TrialWorld* world) {
  FaultTimeline timeline(*world->faults, world->seed);
  for (FaultStrike strike = timeline.pop(); strike.time != kNever; strike = timeline.pop()) {
    sg4::this_actor::sleep_until(to_simgrid_time(strike.time));
    std::unique_lock<sg4::Mutex> lock(*world->mutex);
    world->inbox.push_back(strike);
    world->strike_arrived->notify_all();
  }
}

//! The job master: runs the trial, waiting for either the next fault or its own timer.
//! At equal times the timer goes first, as in the native driver.
void job_master(TrialWorld* world) {
  HostMirror mirror(*world);
  Trial trial(*world->config, world->seed, &mirror);
  std::unique_lock<sg4::Mutex> lock(*world->mutex);
  while (!trial.done()) {
    const Micros timer = trial.next_timer();
    bool timer_reached = false;
    if (world->inbox.empty())
      timer_reached = world->strike_arrived->wait_until(lock, to_simgrid_time(timer)) == std::cv_status::timeout;
    if (!world->inbox.empty() && world->inbox.front().time < timer) {
      const FaultStrike strike = world->inbox.front();
      world->inbox.pop_front();
      const FaultClass& fc = world->config->faults[strike.fault_class];
      // Before: a spare may take the slot at once. A network part is no slot: its nodes are checked by the mirror.
      const int node = is_network(fc.rate.component) ? -1 : trial.victim_of(strike);
      trial.on_fault(strike);
      // SimGrid's own host state must agree with the trial: a crashed node's host is off.
      if (node >= 0 && (fc.effect == Effect::Crash || fc.effect == Effect::Hang) &&
          world->platform->nodes[static_cast<std::size_t>(node)]->is_on())
        throw std::logic_error("SimGrid driver: a crashed node's host is still on");
    } else if (timer_reached || !world->inbox.empty()) {
      trial.on_timer(timer);  // a strike stamped with the timer's own time waits its turn
    }
  }
  world->result = trial.result();
}

void encode(ByteWriter& out, const TrialResult& r, const std::vector<RunEvent>& events) {
  out.put(r.seed);
  for (Micros us : r.ledger.us) out.put(us);
  out.put(r.wall_us);
  out.put(static_cast<std::uint8_t>(r.finished_work));
  out.put(r.checkpoints);
  out.put(r.interruptions);
  out.put(static_cast<std::uint64_t>(r.fault_counts.size()));
  for (auto c : r.fault_counts) out.put(c);
  for (auto c : r.interruptions_by_class) out.put(c);
  out.put(static_cast<std::uint64_t>(events.size()));
  for (const auto& e : events) out.put(e);
}

void decode(ByteReader& in, TrialResult& r, std::vector<RunEvent>& events) {
  r.seed = in.get<std::uint64_t>();
  for (auto& us : r.ledger.us) us = in.get<Micros>();
  r.wall_us = in.get<Micros>();
  r.finished_work = in.get<std::uint8_t>() != 0;
  r.checkpoints = in.get<std::int64_t>();
  r.interruptions = in.get<std::int64_t>();
  r.fault_counts.resize(in.get<std::uint64_t>());
  for (auto& c : r.fault_counts) c = in.get<std::int64_t>();
  r.interruptions_by_class.resize(r.fault_counts.size());
  for (auto& c : r.interruptions_by_class) c = in.get<std::int64_t>();
  events.resize(in.get<std::uint64_t>());
  for (auto& e : events) e = in.get<RunEvent>();
}

//! One trial in a fork of the platform process: actors, run, answer, exit.
Child start_trial(const TrialConfig& config, const FaultTimelineModel& faults, const Platform& platform,
                  const std::vector<double>& pstates, std::uint64_t seed, bool record) {
  return start_child(
      [&](int fd) {
        TrialWorld world;
        world.config = &config;
        world.faults = &faults;
        world.platform = &platform;
        world.pstates = &pstates;
        world.seed = seed;
        world.record = record;
        sg4::ActorPtr injector = sg4::Actor::create("fault-injector", platform.control, fault_injector, &world);
        injector->daemonize();  // ends when the master is done
        sg4::Actor::create("job-master", platform.control, job_master, &world);
        sg4::Engine::get_instance()->run();
        ByteWriter out;
        encode(out, world.result, world.events);
        write_all(fd, out.bytes);
      },
      "SimGrid trial");
}

}  // namespace

SimgridRun run_trials_simgrid(const Scenario& scenario, const TrialConfig& config, const FaultTimelineModel& faults,
                              std::uint64_t seed, int first_trial, int trials, int jobs, bool record_trial0) {
  std::vector<double> pstates{1.0};
  for (const auto& f : scenario.faults)
    if (f.effect == Effect::Slow && std::find(pstates.begin(), pstates.end(), f.speed_factor) == pstates.end())
      pstates.push_back(f.speed_factor);

  // The platform process builds the platform once, then forks one child per trial (up to `jobs`
  // at a time) and relays their answers in trial order.
  const std::string answer = run_in_child(
      [&](int fd) {
        init_simgrid_engine();
        PlatformSpec spec;
        spec.nodes = config.job_nodes + config.spare_nodes;
        spec.node_link_bytes_per_s = scenario.checkpoint.persist_bytes_per_s;
        spec.storage_servers = std::max(1, scenario.cluster.storage.servers);
        spec.server_link_bytes_per_s = scenario.cluster.storage.network_bytes_per_s > 0 ? scenario.cluster.storage.network_bytes_per_s : 1e12;
        spec.disk_read_bytes_per_s = scenario.cluster.storage.read_bytes_per_s > 0 ? scenario.cluster.storage.read_bytes_per_s : 1e12;
        spec.disk_write_bytes_per_s = scenario.cluster.storage.write_bytes_per_s > 0 ? scenario.cluster.storage.write_bytes_per_s : 1e12;
        spec.node_speed_factors = pstates;
        // The platform comes from the topology graph when the scenario has one.
        const Platform platform = scenario.cluster.topology ? build_platform(Topology::build(*scenario.cluster.topology), spec)
                                                            : build_platform(spec);
        std::deque<Child> running;
        int next = 0, relayed = 0;
        while (relayed < trials) {
          while (next < trials && static_cast<int>(running.size()) < std::max(1, jobs)) {
            const int index = first_trial + next;
            running.push_back(start_trial(config, faults, platform, pstates,
                                          trial_seed(seed, static_cast<std::uint64_t>(index)), record_trial0 && index == 0));
            ++next;
          }
          const std::string bytes = finish_child(running.front(), "SimGrid trial");
          running.pop_front();
          const auto size = static_cast<std::uint64_t>(bytes.size());
          write_all(fd, &size, sizeof size);
          write_all(fd, bytes);
          ++relayed;
        }
      },
      "SimGrid driver");

  SimgridRun run;
  run.trials.resize(static_cast<std::size_t>(trials));
  std::size_t offset = 0;
  for (int i = 0; i < trials; ++i) {
    std::uint64_t size = 0;
    if (offset + sizeof size > answer.size()) throw std::runtime_error("SimGrid driver: truncated answer");
    std::memcpy(&size, answer.data() + offset, sizeof size);
    offset += sizeof size;
    const std::string bytes = answer.substr(offset, size);
    offset += size;
    ByteReader in(bytes);
    std::vector<RunEvent> events;
    decode(in, run.trials[static_cast<std::size_t>(i)], events);
    if (first_trial + i == 0) run.trial0_events = std::move(events);
  }
  return run;
}

}  // namespace ctwin
