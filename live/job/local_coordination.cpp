#include "live/job/local_coordination.hpp"

namespace ctwin::live {

namespace {

constexpr const char* kLocalAgent = "local";

}  // namespace

LocalCoordination::LocalCoordination(const Scenario& scenario, const control::Controller& controller, MasterOptions options)
    : master_(scenario, controller, options, Clock::now()) {
  pending_.agent = kLocalAgent;
  JoinRequest join;
  join.agent = kLocalAgent;
  join.node_id = 0;
  join.host = join.address = options.host;
  master_.join(join, Clock::now());
  exchange();
}

std::optional<Plan> LocalCoordination::plan() {
  exchange();
  return plan_;
}

void LocalCoordination::status(const NodeStatus& status) {
  pending_.status = status;
  exchange();
}

void LocalCoordination::trainer_line(const std::string& line) {
  pending_.lines.push_back({0.0, line});  // heard now: the master takes it at once
  exchange();
}

void LocalCoordination::fault(const FaultReport& fault) {
  pending_.fault = fault;
  exchange();
}

void LocalCoordination::sections(const std::vector<RankSection>& sections) {
  pending_.sections = sections;
  exchange();
}

void LocalCoordination::precheck_done(const NodeCheck& result) {
  pending_.precheck = result;
  exchange();
}

void LocalCoordination::storage(const StorageReport& report) {
  pending_.storage.push_back(report);
  exchange();
}

void LocalCoordination::event(const NodeEvent& event) {
  pending_.events.push_back(event);
  exchange();
}

void LocalCoordination::close() {
  if (!master_.done()) master_.close(Clock::now());
}

void LocalCoordination::exchange() {
  const auto now = Clock::now();
  master_.report(pending_, now);
  pending_.lines.clear();
  pending_.fault.reset();
  pending_.sections.clear();
  pending_.precheck.reset();
  pending_.storage.clear();
  pending_.events.clear();
  master_.tick(now);
  plan_ = master_.report(pending_, now);  // the status alone: the plan after the tick, which may have moved the job on
}

}  // namespace ctwin::live
