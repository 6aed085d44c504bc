#include "live/precheck/precheck_report.hpp"
#include "core/version.hpp"

#include <cstdio>
#include <sstream>

namespace ctwin::live {

namespace {

std::string fixed(double x, int decimals) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, x);
  return b;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (const int x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s.empty() ? "-" : s;
}

//! Each rank's group time in `round` (the timeout when its group failed).
double rank_time(const RoundResult& round, int rank) {
  for (std::size_t g = 0; g < round.groups.size(); ++g)
    for (const int r : round.groups[g])
      if (r == rank) return round.group_s[g];
  return -1;
}

}  // namespace

std::string precheck_table(const PrecheckReport& r) {
  const bool gpu = r.backend == "cuda";
  const char* flops_unit = gpu ? "TFLOP/s" : "GFLOP/s";
  const double flops_scale = gpu ? 1e12 : 1e9;
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-14s %-26s %6s %16s %6s %9s %8s %8s %9s %9s  %s\n", "rank", "host", "device", "mem%",
                (std::string("GEMM ") + flops_unit + " (best%)").c_str(), "check", "copy GB/s", "H2D GB/s", "D2H GB/s",
                "round0 s", "round1 s", "verdict");
  out << line;
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const auto& d = r.devices[i];
    const auto& v = r.ranks[i];
    const std::string gemm = fixed(d.gemm_flops / flops_scale, 1) + " (" +
                             fixed(r.best_gemm_flops > 0 ? 100 * d.gemm_flops / r.best_gemm_flops : 0, 0) + "%)";
    const std::string check = d.error[0] ? "error" : (d.mismatches || d.non_finite) ? "WRONG" : "ok";
    auto round_s = [&](std::size_t k) {
      if (k >= r.rounds.size()) return std::string("-");
      const double t = rank_time(r.rounds[k], d.rank);
      return t >= r.options.timeout_s ? std::string("failed") : fixed(t, 3);
    };
    std::snprintf(line, sizeof line, "%-4d %-14.14s %-26.26s %6.1f %16s %6s %9.1f %8.1f %8.1f %9s %9s  %s%s\n", d.rank,
                  d.host, d.name, 100 * d.memory_in_use, gemm.c_str(), check.c_str(), d.copy_bytes_per_s / 1e9,
                  d.h2d_bytes_per_s / 1e9, d.d2h_bytes_per_s / 1e9, round_s(0).c_str(), round_s(1).c_str(),
                  v.verdict.c_str(), v.evict ? ", evict" : "");
    out << line;
  }
  for (std::size_t k = 0; k < r.rounds.size(); ++k) {
    out << "round " << k << " all-reduce " << (r.options.allreduce_bytes >> 20) << " MiB, bus bandwidth by group:";
    for (std::size_t g = 0; g < r.rounds[k].groups.size(); ++g)
      out << "  [" << join(r.rounds[k].groups[g]) << "] "
          << (r.rounds[k].groups[g].size() < 2          ? std::string("one rank, no all-reduce")
              : r.rounds[k].bus_bytes_per_s[g] > 0 ? fixed(r.rounds[k].bus_bytes_per_s[g] / 1e9, 2) + " GB/s"
                                                   : std::string("failed"));
    out << "\n";
  }
  for (std::size_t i = 0; i < r.ranks.size(); ++i)
    for (const auto& why : r.ranks[i].reasons) out << "rank " << i << ": " << why << "\n";
  out << "policy: faulty " << join(r.policy.faulty) << "; stragglers (2x median) " << join(r.policy.stragglers_median)
      << "; (mean + 3 sigma) " << join(r.policy.stragglers_sigma) << "\n";
  const std::vector<int> evict = r.evicted();
  if (!evict.empty()) out << "the controller evicts: " << join(evict) << "\n";
  else if (r.problems()) out << "findings above, but the controller's policy evicts nobody\n";
  else out << "all ranks pass\n";
  return out.str();
}

nlohmann::json precheck_json(const PrecheckReport& r) {
  using nlohmann::json;
  json ranks = json::array();
  for (std::size_t i = 0; i < r.devices.size(); ++i) {
    const auto& d = r.devices[i];
    json times = json::array();
    for (const auto& round : r.rounds) times.push_back(rank_time(round, d.rank));
    ranks.push_back({{"rank", d.rank},
                     {"host", d.host},
                     {"device", d.name},
                     {"bus_id", d.bus_id},
                     {"memory_in_use", d.memory_in_use},
                     {"gemm_flops_per_s", d.gemm_flops},
                     {"gemm_of_best", r.best_gemm_flops > 0 ? d.gemm_flops / r.best_gemm_flops : 0},
                     {"gemm_mismatches", d.mismatches},
                     {"gemm_non_finite", d.non_finite},
                     {"copy_bytes_per_s", d.copy_bytes_per_s},
                     {"h2d_bytes_per_s", d.h2d_bytes_per_s},
                     {"d2h_bytes_per_s", d.d2h_bytes_per_s},
                     {"error", d.error},
                     {"round_s", times},
                     {"verdict", r.ranks[i].verdict},
                     {"reasons", r.ranks[i].reasons},
                     {"evict", r.ranks[i].evict}});
  }
  json rounds = json::array();
  for (const auto& round : r.rounds) {
    json allreduce = json::array();  // a group whose all-reduce failed has no time: null, not -1
    for (const double s : round.allreduce_s) allreduce.push_back(s < 0 ? json(nullptr) : json(s));
    rounds.push_back({{"groups", round.groups},
                      {"seconds", round.group_s},
                      {"allreduce_s", allreduce},
                      {"bus_bytes_per_s", round.bus_bytes_per_s}});
  }
  const auto& o = r.options;
  return {{"schema_version", 1},
          {"ctwin_version", kCtwinVersion},
          {"command", "live precheck"},
          {"backend", r.backend},
          {"ranks", ranks},
          {"rounds", rounds},
          {"policy",
           {{"faulty", r.policy.faulty},
            {"stragglers_median", r.policy.stragglers_median},
            {"stragglers_sigma", r.policy.stragglers_sigma}}},
          {"best_gemm_flops_per_s", r.best_gemm_flops},
          {"problems", r.problems()},
          {"evicted", r.evicted()},
          {"options",
           {{"gemm_n", o.gemm_n},
            {"check_n", o.check_n},
            {"allreduce_bytes", o.allreduce_bytes},
            {"timeout_s", o.timeout_s},
            {"max_memory_in_use", o.max_memory_in_use},
            {"min_of_best", o.min_of_best},
            {"expected_flops_per_s", o.expected_flops},
            {"min_of_expected", o.min_of_expected}}}};
}

}  // namespace ctwin::live
