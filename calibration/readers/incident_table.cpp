#include "calibration/readers/incident_table.hpp"

#include <map>

#include "models/scenario.hpp"

namespace ctwin::calib {

IncidentTable read_incident_table(std::istream& in, const std::string& file) {
  IncidentTable table;
  table.report.file = file;
  table.report.kind = "incident-table";
  static const std::map<std::string, double> kHours{{"hours", 1}, {"days", 24}, {"years", kSecondsPerYear / 3600}};  // a year as rates are read back
  std::vector<int> at;
  auto header = [&](int number, const std::string& text) {
    return read_csv_header(table.report, number, text, {"class", "count", "exposure", "unit", "effect", "source"}, {0, 1, 2, 3},
                           "class, count, exposure and unit", at);
  };
  read_lines(in, table.report, header, [&](int number, const std::string& text) {
    const std::vector<std::string> f = split_csv(text);
    IncidentRow row;
    row.line = number;
    row.category = field_at(f, at, 0);
    const std::string unit = field_at(f, at, 3);
    const std::size_t dash = unit.find('-');
    const std::string component = unit.substr(0, dash), per = dash == std::string::npos ? "" : unit.substr(dash + 1);
    if (!finite_number(field_at(f, at, 1), row.count) || !finite_number(field_at(f, at, 2), row.exposure_hours)) {
      table.report.problem(number, "count and exposure must be finite numbers");
      return;
    }
    if (row.category.empty() || row.count < 0 || row.exposure_hours <= 0) {
      table.report.problem(number, row.category.empty() ? "class is empty" : "count must be >= 0 and exposure > 0");
      return;
    }
    if ((component != "gpu" && component != "node") || !kHours.count(per)) {
      table.report.problem(number, "unit must be gpu- or node- hours, days or years, not \"" + unit + "\"");
      return;
    }
    row.exposure_hours *= kHours.at(per);
    row.component = component;
    row.effect = field_at(f, at, 4);
    // An enumerated field: a typo here would drop the class, or reach the scenario unchecked.
    if (!row.effect.empty() && !effect_named(row.effect)) {
      std::string allowed;
      for (const Effect e : {Effect::Crash, Effect::Hang, Effect::Slow, Effect::Sdc, Effect::Flap, Effect::None})
        allowed += std::string(allowed.empty() ? "" : ", ") + to_string(e);
      throw TraceUnreadable(file + ": line " + std::to_string(number) + ": effect \"" + row.effect + "\" is not one of " + allowed);
    }
    row.source = field_at(f, at, 5);
    table.rows.push_back(std::move(row));
    ++table.report.parsed;
  }, true);
  return table;
}

}  // namespace ctwin::calib
