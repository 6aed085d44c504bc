#include "report/validation_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ctwin {

using ordered_json = nlohmann::ordered_json;

std::string validation_text(const ordered_json& report) {
  std::ostringstream out;
  const auto& trace = report["trace"];
  char line[320];
  const double days = trace["wall_days"].get<double>();
  char period[64];
  if (days >= 1) std::snprintf(period, sizeof period, "%.2f days", days);
  else if (days >= 1.0 / 24) std::snprintf(period, sizeof period, "%.2f hours", 24 * days);
  else std::snprintf(period, sizeof period, "%.1f s", 86400 * days);
  std::string startup;
  if (trace.contains("startup_s_left_out"))
    startup = " (the start-up's " + std::to_string(trace["startup_s_left_out"].get<double>()).substr(0, 5) + " s left out)";
  std::snprintf(line, sizeof line, "ctwin validate: scenario \"%s\" against %s\n  %s traced%s, %ld interruptions; %d trials, seed %llu\n\n",
                report["scenario"]["name"].get<std::string>().c_str(), trace["file"].get<std::string>().c_str(), period, startup.c_str(),
                trace["interruptions"].get<long>(), report["trials"].get<int>(), static_cast<unsigned long long>(report["seed"].get<std::uint64_t>()));
  out << line;
  const double confidence = report["confidence"].get<double>();
  auto num = [](const ordered_json& v) {
    if (v.is_null()) return std::string("-");
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v.get<double>());
    return std::string(text);
  };
  std::vector<std::string> notes;
  for (const auto& verdict : report["verdicts"]) {
    const auto& questions = verdict["questions"];
    const bool posterior = verdict["rates"] == "posterior";
    if (questions.size() > 1) {
      out << (posterior ? "  could this scenario have produced this run, and does this fleet behave as its rates say? (one verdict: every\n"
                          "  uncertain rate is the fleet's own posterior, drawn for both questions)\n"
                        : "  could this scenario have produced this run, and does this fleet behave as its rates say? (one verdict: every\n"
                          "  rate is held exact, so the two questions are one)\n");
    } else if (questions[0] == "produced") {
      out << "  could this scenario have produced this run? (each trial draws its rates from their uncertainty: the fleets'\n"
             "  spread and the evidence's)\n";
    } else {
      out << (posterior ? "  does this fleet behave as the scenario's rates say? (the fleet's own posterior drawn for the calibrated classes,\n"
                          "  the other rates held exact)\n"
                        : "  does this fleet behave as the scenario's rates say? (the rates held exact)\n");
    }
    std::snprintf(line, sizeof line, "  %-34s %-26s %12s %12s   %-25s %s\n", "", "unit", "observed", "sim. mean",
                  (std::to_string(static_cast<int>(std::lround(100 * confidence))) + "% of trials").c_str(), "verdict");
    out << line;
    std::string group;
    for (const auto& r : verdict["rows"]) {
      if (r["group"] != group) {
        group = r["group"].get<std::string>();
        out << "  " << group << "\n";
      }
      const std::string name = r.contains("class") ? r["class"].get<std::string>() : r["metric"].get<std::string>();
      const auto& sim = r["simulated"];
      char interval[80];
      std::snprintf(interval, sizeof interval, "[%s, %s]", num(sim["trials_interval"][0]).c_str(), num(sim["trials_interval"][1]).c_str());
      std::snprintf(line, sizeof line, "    %-32s %-26s %12s %12s   %-25s %s\n", name.c_str(), r["unit"].get<std::string>().c_str(),
                    num(r["observed"]).c_str(), num(sim["mean"]).c_str(), interval, r["verdict"].get<std::string>().c_str());
      out << line;
      const bool gpu_hours = r["unit"].get<std::string>().rfind("GPU-hours", 0) == 0;  // their scaling is said below the table
      if (gpu_hours && r.contains("note") && std::find(notes.begin(), notes.end(), r["note"].get<std::string>()) == notes.end())
        notes.push_back(r["note"].get<std::string>());
    }
    const auto& s = verdict["summary"];
    std::snprintf(line, sizeof line, "\n  %d of %d figures outside the interval of single trials (about %.1f would be by chance alone)\n\n",
                  s["outside"].get<int>(), s["judged"].get<int>(), s["expected_outside_by_chance"].get<double>());
    out << line;
  }
  for (const auto& note : notes) out << "  GPU-hours: " << note << "\n";
  if (trace.contains("classes_not_in_scenario")) {
    out << "  the trace names classes the scenario lacks:";
    const char* separator = " ";
    for (const auto& c : trace["classes_not_in_scenario"]) {
      out << separator << c["class"].get<std::string>() << " (" << c["interruptions"].get<long>() << " interruption"
          << (c["interruptions"].get<long>() == 1 ? "" : "s") << ")";
      separator = ", ";
    }
    out << "\n";
  }
  if (trace.contains("warning")) out << "  warning: " << trace["warning"].get<std::string>() << "\n";
  if (!trace["ends_with_end_row"].get<bool>()) out << "  note: the trace has no end row; it is taken to end at its last event\n";
  return out.str();
}

}  // namespace ctwin
