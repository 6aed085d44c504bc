#include "calibration/readers/fleet_table.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace ctwin::calib {

namespace {

//! The groups a class_group names: one, or the hardware of a fleet that publishes only a total.
std::optional<std::vector<ClassGroup>> groups_named(const std::string& label) {
  if (label == "hardware_total") return std::vector<ClassGroup>{ClassGroup::Gpu, ClassGroup::GpuMemory, ClassGroup::Network, ClassGroup::Host};
  if (label == "gpu_and_gpu_memory") return std::vector<ClassGroup>{ClassGroup::Gpu, ClassGroup::GpuMemory};
  if (const auto g = class_group_named(label)) return std::vector<ClassGroup>{*g};
  return std::nullopt;
}

//! Fitted rows of one fleet must not count a group twice, nor disagree on its HBM.
void check_fleets(const FleetTable& table, const std::string& file) {
  std::map<std::string, std::map<ClassGroup, int>> counted;  // fleet -> group -> line
  std::map<std::string, std::pair<double, int>> hbm;          // fleet -> (GB, line)
  for (const FleetRow& r : table.rows) {
    if (!r.left_out.empty()) continue;
    for (const ClassGroup g : r.groups)
      if (const auto [it, added] = counted[r.fleet].try_emplace(g, r.line); !added)
        throw TraceUnreadable(file + ": line " + std::to_string(r.line) + ": fleet " + r.fleet + " counts " + to_string(g) +
                              " again (line " + std::to_string(it->second) + "): a fitted row of a fleet is one group's count, or leave one out");
    if (const auto [it, added] = hbm.try_emplace(r.fleet, r.hbm_gb, r.line); !added && it->second.first != r.hbm_gb)
      throw TraceUnreadable(file + ": line " + std::to_string(r.line) + ": fleet " + r.fleet + " has hbm_gb " + std::to_string(r.hbm_gb) +
                            ", line " + std::to_string(it->second.second) + " " + std::to_string(it->second.first));
  }
  if (counted.size() > kMostFleets)
    throw TraceUnreadable(file + ": " + std::to_string(counted.size()) + " fleets fitted: at most " + std::to_string(kMostFleets));
}

}  // namespace

FleetTable read_fleet_table(std::istream& in, const std::string& file) {
  FleetTable table;
  table.report.file = file;
  table.report.kind = "fleet-table";
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    return read_csv_header(table.report, number, text, {"fleet", "gpu", "hbm_gb", "gpus", "nodes", "days", "class_group", "count", "in_fit"},
                           {0, 2, 3, 4, 5, 6, 7}, "fleet, hbm_gb, gpus, nodes, days, class_group and count", at);
  };
  read_lines(in, table.report, header, [&](int number, const std::string& text) {
    const std::vector<std::string> f = split_csv(text);
    FleetRow r;
    r.line = number;
    r.fleet = field_at(f, at, 0);
    r.gpu = field_at(f, at, 1);
    r.label = field_at(f, at, 6);
    const std::string in_fit = field_at(f, at, 8);
    if (r.fleet.empty()) return table.report.problem(number, "fleet is empty");
    if (!finite_number(field_at(f, at, 7), r.count) || r.count < 0 || r.count > 1e12)
      return table.report.problem(number, "count must be a number of faults from 0 to 1e12");
    if (in_fit == "no" || in_fit.rfind("no:", 0) == 0) {
      r.left_out = in_fit.size() > 3 ? in_fit.substr(in_fit.find_first_not_of(' ', 3)) : "the table says so";
    } else if (!in_fit.empty() && in_fit != "yes") {
      return table.report.problem(number, "in_fit must be \"yes\", or \"no: why\"");
    }
    const auto groups = groups_named(r.label);
    if (!groups) {
      if (r.left_out.empty())
        return table.report.problem(number, "class_group \"" + r.label + "\" is not a group (gpu, gpu_memory, network, host, software, hardware_total)");
      r.left_out += " (class_group \"" + r.label + "\" is not a group)";
    } else {
      r.groups = *groups;
    }
    // Whole GPUs, nodes, and at least a quarter of an hour of them: what a count can be over.
    bool bad = false;
    auto number_or = [&](int which, double& out, double least, const char* what) {
      const std::string v = field_at(f, at, which);
      if (v.empty()) return false;
      if (!finite_number(v, out) || out < least || out > 1e9) {
        table.report.problem(number, std::string(what) + " must be a number from " + std::to_string(least).substr(0, 4) + " to 1e9");
        bad = true;
        return false;
      }
      return true;
    };
    const bool hbm = number_or(2, r.hbm_gb, 1, "hbm_gb"), gpus = number_or(3, r.gpus, 1, "gpus"), nodes = number_or(4, r.nodes, 1, "nodes"),
               days = number_or(5, r.days, 0.01, "days");
    if (bad) return;
    const bool node_groups = std::any_of(r.groups.begin(), r.groups.end(), [](ClassGroup g) { return group_component(g) == Component::Node; });
    if (r.left_out.empty() && (!hbm || !gpus || !days || (node_groups && !nodes)))
      return table.report.problem(number, "a fitted row needs hbm_gb, gpus, days and, for a node group, nodes");
    if (!hbm) r.hbm_gb = 80;
    table.rows.push_back(r);
    ++table.report.parsed;
  });
  if (std::none_of(table.rows.begin(), table.rows.end(), [](const FleetRow& r) { return r.left_out.empty(); })) {
    if (!table.report.malformed.empty())
      throw TraceUnreadable(file + ": line " + std::to_string(table.report.malformed.front().line) + ": " + table.report.malformed.front().reason);
    throw TraceUnreadable(file + ": no row to fit (a fleet table: fleet, gpu, hbm_gb, gpus, nodes, days, class_group, count, in_fit)");
  }
  check_fleets(table, file);
  return table;
}

}  // namespace ctwin::calib
