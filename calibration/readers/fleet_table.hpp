#pragma once
//! A table of public fleets' fault counts (scenarios/sources/fleet_class_counts.csv), what `ctwin
//! prior` fits: a row per fleet and class group, a count over the fleet's GPUs (or nodes) and days.

#include <istream>
#include <string>
#include <vector>

#include "core/text_records.hpp"
#include "models/scenario.hpp"

namespace ctwin::calib {

struct FleetRow {
  std::string fleet, gpu, label;  //!< label: the table's class_group
  double hbm_gb = 80, gpus = 0, nodes = 0, days = 0, count = 0;
  std::vector<ClassGroup> groups;  //!< the groups the count sums (hardware_total: gpu, gpu_memory, network, host)
  std::string left_out;            //!< why the row is not fitted ("" when it is)
  int line = 0;
};

struct FleetTable {
  std::vector<FleetRow> rows;  //!< every row read; those with `left_out` are only predicted
  ReadReport report;
};

//! The most fleets a table fits (each held out in turn refits the rest).
inline constexpr std::size_t kMostFleets = 200;

//! CSV: fleet, gpu, hbm_gb, gpus, nodes, days, class_group, count, in_fit ("yes", or "no: why").
//! A malformed row is reported by line and skipped whole. TraceUnreadable (exit 2): no row to fit;
//! one fleet whose fitted rows count a group twice, or give it two HBM sizes; more than kMostFleets.
FleetTable read_fleet_table(std::istream& in, const std::string& file);

}  // namespace ctwin::calib
