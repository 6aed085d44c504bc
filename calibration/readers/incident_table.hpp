#pragma once
//! Incident tables: counts per category over an exposure, as published fleet studies give them
//! (docs/calibration.md). CSV with a header naming at least `class,count,exposure,unit`;
//! `component`, `effect`, `source` and `notes` are optional. `unit` is one of gpu-hours,
//! gpu-days, gpu-years, node-hours, node-days, node-years. A vague statement in a logbook ("a GPU
//! dies every week or so") becomes such a row (count × exposure), never invented dated events.

#include <string>
#include <vector>

#include "core/text_records.hpp"

namespace ctwin::calib {

struct IncidentRow {
  std::string category;
  double count = 0;
  double exposure_hours = 0;  //!< in component-hours
  std::string component;      //!< "gpu" or "node", from the unit
  std::string effect;         //!< optional: crash, hang, slow, ...
  std::string source;
  int line = 0;
};

struct IncidentTable {
  std::vector<IncidentRow> rows;
  ReadReport report;
};

IncidentTable read_incident_table(std::istream& in, const std::string& file);

}  // namespace ctwin::calib
