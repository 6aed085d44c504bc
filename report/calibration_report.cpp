#include "report/calibration_report.hpp"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <sstream>

#include "report/svg_plot.hpp"

namespace ctwin {

namespace {

//! printf into a stream: the table mixes both styles.
[[gnu::format(printf, 2, 3)]] void printf_to(std::ostream& out, const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  out << line;
}


std::vector<double> numbers(const nlohmann::ordered_json& array) { return array.get<std::vector<double>>(); }

//! Fitted CDFs (lines) against the empirical one (points), on an axis from 0 to a little above the
//! highest of them: at fleet scale 2% of parts fail in the window, and on a 0-to-1 axis every
//! curve would lie on the x axis.
Plot cdf_plot(const std::string& title, const nlohmann::ordered_json& cdf, const std::vector<std::string>& models) {
  Plot plot;
  plot.title = title;
  plot.x_label = "hours";
  plot.y_label = "fraction failed by then";
  plot.log_x = true;
  PlotSeries empirical{"empirical (Kaplan-Meier)", numbers(cdf["hours"]), numbers(cdf["empirical"]), {}, {}, false};
  plot.series.push_back(empirical);
  for (const std::string& m : models)
    if (cdf.contains(m)) plot.series.push_back({m + " fit", numbers(cdf["hours"]), numbers(cdf[m]), {}, {}, true, false});
  double highest = 0;
  for (const auto& s : plot.series)
    for (const double y : s.y) highest = std::max(highest, y);
  plot.y_range = std::make_pair(0.0, highest > 0.8 || highest <= 0 ? 1.0 : 1.15 * highest);
  return plot;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> calibration_plots(const nlohmann::ordered_json& report) {
  std::vector<std::pair<std::string, std::string>> out;
  // Rates by class with their intervals, one plot per exposure unit (log scale: they span decades).
  for (const char* component : {"gpu", "node"}) {
    Plot plot;
    plot.title = std::string("fitted rates per ") + component + "-year, with " +
                 std::to_string(static_cast<int>(std::lround(100 * report["confidence"].get<double>()))) + "% intervals";
    plot.y_label = std::string("failures per ") + component + "-year";
    plot.x_label = "fault class";
    plot.log_y = true;
    PlotSeries rates{"", {}, {}, {}, {}, false};
    for (const auto& c : report["classes"]) {
      const std::string key = "rate_per_" + c["component"].get<std::string>() + "_year";
      if (c["component"] != component || !c.contains(key) || !(c[key]["estimate"].get<double>() > 0)) continue;
      const auto& rate = c[key];
      rates.x.push_back(static_cast<double>(plot.x_labels.size()));
      plot.x_labels.push_back(c["class"].get<std::string>());
      rates.y.push_back(rate["estimate"].get<double>());
      rates.y_low.push_back(std::max(rate["lower"].get<double>(), 1e-3 * rate["estimate"].get<double>()));  // a log axis has no 0
      rates.y_high.push_back(rate["upper"].get<double>());
    }
    if (rates.x.empty()) continue;
    plot.series.push_back(rates);
    out.emplace_back(std::string("rates_") + component + ".svg", plot_svg(plot));
  }
  for (const auto& c : report["classes"])
    if (c.contains("lifetime_cdf"))
      out.emplace_back("lifetimes_" + c["class"].get<std::string>() + ".svg",
                       plot_svg(cdf_plot(c["class"].get<std::string>() + ": lifetimes", c["lifetime_cdf"], {"weibull", "exponential"})));
  for (const char* durations : {"repair_hours", "recovery_hours"}) {
    if (!report.contains(durations) || !report[durations].contains("cdf")) continue;
    // Every duration the same (sigma 0, or rounding noise of 1e-15): a lognormal has nothing to
    // describe, so none is drawn.
    const auto& d = report[durations];
    const bool spread = d.contains("log_sigma") && d["log_sigma"].value("estimate", 0.0) > 1e-6;
    out.emplace_back(std::string(durations) + ".svg",
                     plot_svg(cdf_plot(spread ? std::string(durations) : std::string(durations) + ": all equal, no fit drawn", d["cdf"],
                                       spread ? std::vector<std::string>{"lognormal"} : std::vector<std::string>{})));
  }
  return out;
}

std::string calibration_text(const nlohmann::ordered_json& r, std::size_t traces, double confidence) {
  std::ostringstream out;
  out << "ctwin calibrate: " << traces << " trace(s)\n";
  for (const auto& t : r["traces"]) {
    out << "  " << t["file"].get<std::string>() << "  (" << t["kind"].get<std::string>() << "): " << t["records"] << " records, "
              << t["skipped"] << " skipped, " << t["malformed"] << " malformed\n";
    if (t.contains("malformed_lines"))
      for (const auto& m : t["malformed_lines"])
        out << "      line " << m["line"] << ": " << m["reason"].get<std::string>() << "\n";
    if (t.contains("warning")) out << "      warning: " << t["warning"].get<std::string>() << "\n";
    if (t.contains("classes_skipped"))
      for (const auto& c : t["classes_skipped"])
        out << "      skipped " << c["rows"] << " fault row(s) of class \"" << c["class"].get<std::string>() << "\": " << c["why"].get<std::string>() << "\n";
  }
  out << "\n  class                          count   rate per component-year [" << 100 * confidence << "% CI]\n";
  for (const auto& c : r["classes"]) {
    const std::string rate_key = "rate_per_" + c["component"].get<std::string>() + "_year";
    char line[200];
    if (!c.contains(rate_key)) {  // faults with no exposure: no rate (the warning says why)
      std::snprintf(line, sizeof line, "  %-28s %7.0f   -\n", c["class"].get<std::string>().c_str(), c["count"].get<double>());
      out << line << "      warning: " << c["warning"].get<std::string>() << "\n";
      continue;
    }
    const auto& rate = c[rate_key];
    std::snprintf(line, sizeof line, "  %-28s %7.0f   %.4g [%.4g, %.4g] /%s-year", c["class"].get<std::string>().c_str(),
                  c["count"].get<double>(), rate["estimate"].get<double>(), rate["lower"].get<double>(), rate["upper"].get<double>(),
                  c["component"].get<std::string>().c_str());
    out << line;
    if (c.contains("weibull"))
      printf_to(out, "   Weibull shape %.2f [%.2f, %.2f], p(shape=1) %.3g", c["weibull"]["shape"]["estimate"].get<double>(),
                  c["weibull"]["shape"]["lower"].get<double>(), c["weibull"]["shape"]["upper"].get<double>(),
                  c["weibull"]["shape_one_p_value"].get<double>());
    out << "\n";
    // Both rates and the reason for the form written (calibration/shape_choice.hpp).
    if (c.contains("shape_choice")) {
      const auto& observed = c["rate_observed_per_" + c["component"].get<std::string>() + "_year"];
      if (observed["estimate"] != rate["estimate"])
        printf_to(out, "      observed over the window: %.4g [%.4g, %.4g]\n", observed["estimate"].get<double>(), observed["lower"].get<double>(),
                  observed["upper"].get<double>());
      out << "      " << c["shape_choice"]["reason"].get<std::string>() << "\n";
    }
    if (c.contains("warning")) out << "      warning: " << c["warning"].get<std::string>() << "\n";
    if (c.contains("trend_warning")) out << "      warning: " << c["trend_warning"].get<std::string>() << "\n";
  }
  if (r.contains("trend")) {
    const auto& t = r["trend"];
    printf_to(out, "\n  trend of the fleet's faults (Laplace, %d events): U %.2f, p %.3g%s\n", t["events"].get<int>(), t["statistic"].get<double>(),
              t["p_value"].get<double>(), t["significant"].get<bool>() ? (", " + t["direction"].get<std::string>()).c_str() : ": none found");
    if (t.contains("warning")) out << "  warning: " << t["warning"].get<std::string>() << "\n";
  }
  if (r.contains("job_mttf_vs_size") && !r["job_mttf_vs_size"]["exponent"].is_null())
    printf_to(out, "\n  job MTTF against size: exponent %.2f [%.2f, %.2f] (1 is the 1/(N r) law)\n",
                r["job_mttf_vs_size"]["exponent"]["estimate"].get<double>(), r["job_mttf_vs_size"]["exponent"]["lower"].get<double>(),
                r["job_mttf_vs_size"]["exponent"]["upper"].get<double>());
  if (r.contains("step_times")) {
    const auto& st = r["step_times"];
    const auto& share = st["slow_steps"]["share"];
    printf_to(out, "\n  step times: %zu records, median %.4g s (p95 %.4g s, p99 %.4g s); steps over %.2gx the median: %.3g%% [%.3g%%, %.3g%%]\n",
                st["records"].get<std::size_t>(), st["median_s"].get<double>(), st["p95_s"].get<double>(), st["p99_s"].get<double>(),
                st["slow_steps"]["above_median_times"].get<double>(), 100 * share["estimate"].get<double>(),
                100 * share["lower"].get<double>(), 100 * share["upper"].get<double>());
    if (st.contains("slow_nodes")) {
      const auto& nodes = st["slow_node_share"];
      printf_to(out, "  slow nodes: %zu of %zu, share %.3g%% [%.3g%%, %.3g%%]", st["slow_nodes"].size(), st["nodes"].get<std::size_t>(),
                  100 * nodes["estimate"].get<double>(), 100 * nodes["lower"].get<double>(), 100 * nodes["upper"].get<double>());
      for (const auto& n : st["slow_nodes"]) printf_to(out, "  %s at %.3g", n["node"].get<std::string>().c_str(), n["speed_factor"].get<double>());
      printf_to(out, "\n");
      if (st.contains("warning")) out << "  warning: " << st["warning"].get<std::string>() << "\n";
      if (st.contains("scenario"))
        out << "  " << (st["scenario"]["written"].get<bool>() ? "written into the scenario as class " : "not written into the scenario as class ")
            << st["scenario"]["class"].get<std::string>() << ": " << st["scenario"]["why"].get<std::string>() << "\n";
    }
  }
  if (!r["lemons"].empty()) out << "\n  lemons: " << r["lemons"].size() << " node(s) with improbably many faults\n";
  if (r.contains("pooling")) {
    const auto& p = r["pooling"];
    const auto& f = p["fleet_factor"];
    printf_to(out, "\n  pooled with the population prior \"%s\": this fleet against the population's median fleet x%.3g [%.3g, %.3g]\n"
                   "    group         faults   exposure (component-days)   rate per 1000 component-days, median [90%%]   written as\n",
              p["prior"].get<std::string>().c_str(), f["median"].get<double>(), f["p05"].get<double>(), f["p95"].get<double>());
    for (const auto& g : p["groups"]) {
      const std::string unit = g.contains("exposure_gpu_days") ? "gpu" : "node";
      const auto& rate = g["rate_per_1000_" + unit + "_days"];
      printf_to(out, "    %-12s %7.0f   %12.4g %-9s        %.4g [%.4g, %.4g]%s   sigma %.3g + fleet %.3g\n", g["group"].get<std::string>().c_str(),
                g["count"].get<double>(), g["exposure_" + unit + "_days"].get<double>(), (unit + "-days").c_str(), rate["median"].get<double>(),
                rate["p05"].get<double>(), rate["p95"].get<double>(), g["observed"].get<bool>() ? "" : " (prior only)",
                g["own_sigma"].get<double>(), g["fleet_sigma"].get<double>());
    }
    if (p.contains("warning")) out << "  warning: " << p["warning"].get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace ctwin
