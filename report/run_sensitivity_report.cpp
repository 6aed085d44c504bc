#include "report/run_sensitivity_report.hpp"

#include <cstdio>
#include <sstream>

#include "report/run_report.hpp"

namespace ctwin {

namespace {

std::string percent(double goodput) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %%", 100 * goodput);
  return text;
}

}  // namespace

std::string run_sensitivity_text(const RunSensitivity& s) {
  std::ostringstream out;
  char line[400];
  out << "\n  sensitivity: goodput over each assumed field's plausible range, the others as given; every value runs the\n"
      << "  same " << thousands(s.trials) << " trials (the same fault timelines), so each difference from the scenario's is paired (95% CI)\n";
  for (const RunSensitivityField& f : s.fields) {
    const AssumedField& a = f.field;
    if (!a.skipped.empty()) {
      std::snprintf(line, sizeof line, "    %-18s skipped: %s\n", a.field.c_str(), a.skipped.c_str());
      out << line;
      continue;
    }
    std::snprintf(line, sizeof line, "    %-18s %s .. %s   (%s, %s)\n", a.field.c_str(), percent(f.min).c_str(), percent(f.max).c_str(),
                  a.pointer.c_str(), a.range.c_str());
    out << line << "      " << a.why << "\n";
    auto row = [&](const RunSensitivityPoint& p) {
      if (!p.excluded.empty()) {
        std::snprintf(line, sizeof line, "      %-26s cannot run: %s\n", p.value.c_str(), p.excluded.c_str());
      } else {
        std::snprintf(line, sizeof line, "      %-26s %8s   %+7.2f points [%+.2f, %+.2f]\n", p.value.c_str(), percent(p.goodput.mean).c_str(),
                      100 * p.vs_given.mean, 100 * p.vs_given.ci95_low, 100 * p.vs_given.ci95_high);
      }
      out << line;
    };
    // The value below the scenario's first (or the one that turns it off), the scenario's own, the one above.
    if (!f.points.empty()) row(f.points[0]);
    const std::string given = a.given.rfind("as stated", 0) == 0 ? a.given : a.given + " (as given)";
    std::snprintf(line, sizeof line, "      %-26s %8s\n", given.c_str(), percent(s.given.mean).c_str());
    out << line;
    for (std::size_t i = 1; i < f.points.size(); ++i) row(f.points[i]);
  }
  out << "\n  goodput " << percent(s.given.mean) << ", " << percent(s.min) << " .. " << percent(s.max)
      << " over these fields, one at a time" << (s.most.empty() ? "; none of them moves it" : "; " + s.most + " moves it most") << "\n";
  return out.str();
}

nlohmann::ordered_json run_sensitivity_json(const RunSensitivity& s) {
  using ordered_json = nlohmann::ordered_json;
  ordered_json fields = ordered_json::array();
  for (const RunSensitivityField& f : s.fields) {
    const AssumedField& a = f.field;
    ordered_json one{{"field", a.field}, {"pointer", a.pointer}, {"given", a.given}, {"range", a.range}, {"why", a.why}};
    if (!a.skipped.empty()) {
      one["skipped"] = a.skipped;
      fields.push_back(std::move(one));
      continue;
    }
    ordered_json points = ordered_json::array();
    for (const RunSensitivityPoint& p : f.points) {
      ordered_json point{{"value", p.value}};
      if (p.excluded.empty()) point["goodput"] = summary_json(p.goodput), point["vs_given"] = summary_json(p.vs_given);
      else point["excluded"] = p.excluded;
      points.push_back(std::move(point));
    }
    one["min"] = f.min;
    one["max"] = f.max;
    one["lowest"] = f.lowest;
    one["highest"] = f.highest;
    one["points"] = std::move(points);
    fields.push_back(std::move(one));
  }
  return ordered_json{{"goodput", s.given.mean}, {"trials", s.trials}, {"min", s.min}, {"max", s.max},
                      {"most", s.most.empty() ? ordered_json(nullptr) : ordered_json(s.most)}, {"fields", std::move(fields)}};
}

}  // namespace ctwin
