#include "live/job/recovery.hpp"

namespace ctwin::live {

std::vector<control::Action> answer_fault(const control::Controller& controller, const control::ClusterView& view, int node,
                                          const LiveFaultClass& fault, int gpu, int xid) {
  control::Event event;
  event.time_s = view.now_s;
  event.node = node;
  event.gpu = gpu;
  event.xid = xid;
  event.proposed = {fault.act, node, 0, -1};
  std::vector<control::Action> actions;
  controller.decide(event, view, actions);
  std::erase_if(actions, [](const control::Action& a) { return a.act == Act::None; });
  return actions;
}

void answer_diagnosis(const control::Controller& controller, const control::ClusterView& view, int node, std::vector<control::Action>& actions) {
  control::Event diagnosing;
  diagnosing.time_s = view.now_s;
  diagnosing.signal = control::Signal::Diagnosing;
  diagnosing.node = node;
  controller.decide(diagnosing, view, actions);
  std::erase_if(actions, [](const control::Action& a) { return a.act == Act::None; });
}

std::optional<std::string> RestartBudget::spent() const {
  if (restarts_ >= most_) return "gave up after " + std::to_string(restarts_) + " restarts";
  if (failed_launches_ >= 3) return "gave up: the trainer failed 3 times in a row before it restored (check its command and its log)";
  return std::nullopt;
}

}  // namespace ctwin::live
