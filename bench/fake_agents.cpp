// ctwin_fake_agents: N lightweight agents that speak the real protocol to a job master (each one
// an AgentLink, the agent's own link: join, then a report every interval), with no trainer. For
// bench/master_load.sh: the master's CPU and memory with 1,000 agents.
//   ctwin_fake_agents --master 127.0.0.1:PORT --agents 1000 [--first 0] --seconds 60   (token: $CTWIN_JOB_TOKEN)
// Each agent holds three descriptors; master_load.sh runs several of these processes for 10,000.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "live/cluster/agent_link.hpp"

int main(int argc, char** argv) {
  std::string master = "127.0.0.1:29400";
  int agents = 1000, first = 0;
  double seconds = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--master") master = value;
    else if (flag == "--agents") agents = std::atoi(value.c_str());
    else if (flag == "--first") first = std::atoi(value.c_str());
    else if (flag == "--seconds") seconds = std::atof(value.c_str());
  }
  const char* token = std::getenv("CTWIN_JOB_TOKEN");
  const auto colon = master.rfind(':');
  if (!token || colon == std::string::npos || agents < 1) {
    std::fprintf(stderr, "usage: CTWIN_JOB_TOKEN=... ctwin_fake_agents --master HOST:PORT [--agents N] [--seconds S]\n");
    return 2;
  }
  using namespace ctwin::live;
  std::vector<std::unique_ptr<cluster::AgentLink>> links;
  for (int a = first; a < first + agents; ++a) {
    JoinRequest join{"fake-" + std::to_string(a), a, "fake-host-" + std::to_string(a), "127.0.0.1", false};
    links.push_back(std::make_unique<cluster::AgentLink>(master.substr(0, colon), std::atoi(master.c_str() + colon + 1), token, join));
  }
  // Each agent does what a node's supervisor does: stopped with nothing to restore until the
  // master says run, then running, its step going up.
  const auto start = std::chrono::steady_clock::now();
  long step = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(seconds)) {
    ++step;
    int running = 0;
    for (auto& link : links) {
      const auto plan = link->plan();
      if (plan && plan->what == PlanKind::Run) {
        link->status({plan->generation, NodeState::Running, step, std::nullopt});
        ++running;
      } else {
        link->status({plan ? plan->generation : 0, NodeState::Stopped, -1, std::vector<std::int64_t>{}, plan ? plan->node_rank : -1});
      }
    }
    std::printf("t=%.0fs running=%d/%d\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), running, agents);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return 0;
}
