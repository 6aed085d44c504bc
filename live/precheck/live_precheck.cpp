#include "live/precheck/live_precheck.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace ctwin::live {

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
std::vector<unsigned char> to_bytes(const T& value) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &value, sizeof(T));
  return b;
}
template <class T>
T from_bytes(const std::vector<unsigned char>& b) {
  T value{};
  if (b.size() != sizeof(T)) throw std::runtime_error("precheck: a rank sent a message of the wrong size");
  std::memcpy(&value, b.data(), sizeof(T));
  return value;
}

std::vector<unsigned char> encode(const NodeGroups& groups) {
  std::vector<int> flat{static_cast<int>(groups.size())};
  for (const auto& g : groups) {
    flat.push_back(static_cast<int>(g.size()));
    flat.insert(flat.end(), g.begin(), g.end());
  }
  std::vector<unsigned char> b(flat.size() * sizeof(int));
  std::memcpy(b.data(), flat.data(), b.size());
  return b;
}
NodeGroups decode(const std::vector<unsigned char>& b) {
  std::vector<int> flat(b.size() / sizeof(int));
  std::memcpy(flat.data(), b.data(), flat.size() * sizeof(int));
  NodeGroups groups;
  std::size_t i = 1;
  for (int g = 0; !flat.empty() && g < flat[0]; ++g) {
    const int n = flat[i++];
    groups.emplace_back(flat.begin() + static_cast<long>(i), flat.begin() + static_cast<long>(i) + n);
    i += static_cast<std::size_t>(n);
  }
  return groups;
}

void copy_text(char* dst, std::size_t size, const std::string& text) { std::snprintf(dst, size, "%s", text.c_str()); }

DeviceCheck check_own_device(ComputeDevice& device, int rank, const PrecheckOptions& o) {
  DeviceCheck c;
  c.rank = rank;
  char host[64] = {};
  ::gethostname(host, sizeof host - 1);
  copy_text(c.host, sizeof c.host, host);
  try {
    const DeviceInfo info = device.info();
    copy_text(c.name, sizeof c.name, info.name);
    copy_text(c.bus_id, sizeof c.bus_id, info.bus_id);
    c.memory_in_use = info.memory_total_bytes ? double(info.memory_used_bytes) / double(info.memory_total_bytes) : 0;
    c.gemm_flops = device.gemm_flops(o.gemm_n, o.gemm_iterations);
    const GemmCheck g = device.gemm_check(o.check_n);
    c.mismatches = g.mismatches;
    c.non_finite = g.non_finite;
    c.copy_bytes_per_s = device.memory_copy_bandwidth(o.copy_bytes, o.copy_iterations);
    const auto [h2d, d2h] = device.host_link_bandwidth(o.link_bytes, o.copy_iterations);
    c.h2d_bytes_per_s = h2d;
    c.d2h_bytes_per_s = d2h;
  } catch (const std::exception& e) {
    copy_text(c.error, sizeof c.error, e.what());
  }
  return c;
}

//! The ranks whose GEMM is below `min_of_best` of the best one measured.
std::vector<int> slow_gemm_ranks(const std::vector<DeviceCheck>& devices, const PrecheckOptions& o) {
  double best = 0;
  for (const auto& d : devices)
    if (d.error[0] == '\0') best = std::max(best, d.gemm_flops);
  std::vector<int> slow;
  for (const auto& d : devices)
    if (d.error[0] == '\0' && d.gemm_flops < o.min_of_best * best) slow.push_back(d.rank);
  return slow;
}

//! Runs `work` on this rank: one rank at a time when devices share the host's cores (their
//! timings would disturb each other), else all at once.
template <class Work>
void each_in_turn(Bootstrap& boot, ComputeDevice& device, const std::vector<int>& ranks, Work&& work) {
  if (!device.shares_host_cores()) {
    if (std::find(ranks.begin(), ranks.end(), boot.rank()) != ranks.end()) work();
    return;
  }
  for (const int turn : ranks) {  // a token through the bootstrap
    if (turn == boot.rank()) work();
    boot.allgather({});
  }
}

//! A check this rank failed on its own: it still joins its group's all-reduce (so that its partner
//! does not wait for a timeout) but fails the group, as DLRover's node check does.
bool failed_own_check(const DeviceCheck& c, const PrecheckOptions& o) {
  return c.error[0] != '\0' || c.memory_in_use > o.max_memory_in_use || c.mismatches > 0 || c.non_finite > 0;
}

struct MemberTime {
  double total_s = -1;      //!< burn-in + all-reduce; < 0: failed
  double allreduce_s = -1;
};

//! Every rank's part of one round: the leader's id travels through the bootstrap, then the group
//! runs its burn-in and all-reduce.
MemberTime run_my_group(Bootstrap& boot, ComputeDevice& device, const NodeGroups& groups, bool failed_check,
                        const PrecheckOptions& o) {
  const int me = boot.rank();
  const std::vector<int>* mine = nullptr;
  for (const auto& g : groups)
    if (std::find(g.begin(), g.end(), me) != g.end()) mine = &g;
  const bool leader = mine && mine->front() == me;
  std::vector<unsigned char> id;
  std::string id_error;
  if (leader) try {
      id = device.make_comm_id();
    } catch (const std::exception& e) {
      id_error = e.what();
    }
  const auto ids = boot.allgather(id);
  MemberTime t;
  if (!mine) return t;
  const auto& leader_id = ids[static_cast<std::size_t>(mine->front())];
  if (leader_id.empty()) return t;  // the leader could not make one: the group fails
  const int index = static_cast<int>(std::find(mine->begin(), mine->end(), me) - mine->begin());
  try {
    const auto t0 = Clock::now();
    device.gemm_flops(o.gemm_n, o.burn_in_iterations);
    t.allreduce_s = device.allreduce_seconds(leader_id, static_cast<int>(mine->size()), index, o.allreduce_bytes,
                                             o.allreduce_iterations, o.timeout_s);
    t.total_s = std::chrono::duration<double>(Clock::now() - t0).count();
  } catch (const std::exception&) {
    t = {};
  }
  if (failed_check) t.total_s = -1;
  return t;
}

//! Rank 0's side of the controller's rounds: tells every rank its group, runs its own, gathers times.
class LiveRunner final : public control::PrecheckRunner {
 public:
  LiveRunner(Bootstrap& boot, ComputeDevice& device, bool failed_check, const PrecheckOptions& o)
      : boot_(boot), device_(device), failed_check_(failed_check), o_(o) {}
  std::vector<double> run_groups(const NodeGroups& groups) override {
    boot_.allgather(encode(groups));
    const MemberTime mine = run_my_group(boot_, device_, groups, failed_check_, o_);
    const auto all = boot_.allgather(to_bytes(mine));
    RoundResult round;
    round.groups = groups;
    for (const auto& g : groups) {
      double slowest = 0, allreduce = 0;
      bool failed = false;
      for (const int r : g) {
        const auto t = from_bytes<MemberTime>(all[static_cast<std::size_t>(r)]);
        failed |= t.total_s < 0;
        slowest = std::max(slowest, t.total_s);
        allreduce = t.allreduce_s < 0 || allreduce < 0 ? -1 : std::max(allreduce, t.allreduce_s);
      }
      const double n = static_cast<double>(g.size());
      round.group_s.push_back(failed ? o_.timeout_s : slowest);
      // A group of one has nothing to all-reduce: 0 s, not a failure.
      round.allreduce_s.push_back(g.size() < 2 ? 0 : allreduce > 0 ? allreduce : -1);
      // nccl-tests' bus bandwidth: algorithm bandwidth x 2(n-1)/n.
      round.bus_bytes_per_s.push_back(allreduce > 0 && n > 1 ? double(o_.allreduce_bytes) / allreduce * 2 * (n - 1) / n : 0);
    }
    rounds.push_back(round);
    return round.group_s;
  }
  double timeout_s() const override { return o_.timeout_s; }
  std::vector<RoundResult> rounds;

 private:
  Bootstrap& boot_;
  ComputeDevice& device_;
  bool failed_check_;
  const PrecheckOptions& o_;
};

void judge(PrecheckReport& r, const std::vector<control::Action>& actions) {
  const auto& o = r.options;
  r.ranks.assign(r.devices.size(), {});
  for (const auto& d : r.devices)
    if (d.error[0] == '\0') r.best_gemm_flops = std::max(r.best_gemm_flops, d.gemm_flops);
  auto mark = [&](int rank, const std::string& verdict, const std::string& why) {
    auto& v = r.ranks[static_cast<std::size_t>(rank)];
    if (verdict == "faulty" || v.verdict == "ok") v.verdict = verdict;
    v.reasons.push_back(why);
  };
  char text[200];
  for (const auto& d : r.devices) {
    if (d.error[0] != '\0') mark(d.rank, "faulty", std::string("check failed: ") + d.error);
    if (d.memory_in_use > o.max_memory_in_use) {
      std::snprintf(text, sizeof text, "%.0f%% of device memory already in use (limit %.0f%%)", 100 * d.memory_in_use,
                    100 * o.max_memory_in_use);
      mark(d.rank, "faulty", text);
    }
    if (d.mismatches > 0 || d.non_finite > 0) {
      std::snprintf(text, sizeof text, "GEMM results wrong: %llu off the reference, %llu NaN/Inf (silent data corruption)",
                    static_cast<unsigned long long>(d.mismatches), static_cast<unsigned long long>(d.non_finite));
      mark(d.rank, "faulty", text);
    }
    if (d.error[0] == '\0' && d.gemm_flops < o.min_of_best * r.best_gemm_flops) {
      std::snprintf(text, sizeof text, "GEMM at %.0f%% of the best device checked (limit %.0f%%)",
                    100 * d.gemm_flops / r.best_gemm_flops, 100 * o.min_of_best);
      mark(d.rank, "straggler", text);
    }
    if (d.error[0] == '\0' && o.expected_flops > 0 && d.gemm_flops < o.min_of_expected * o.expected_flops) {
      std::snprintf(text, sizeof text, "GEMM at %.0f%% of the scenario's peak (limit %.0f%%)",
                    100 * d.gemm_flops / o.expected_flops, 100 * o.min_of_expected);
      mark(d.rank, "straggler", text);
    }
  }
  for (const int n : r.policy.faulty) mark(n, "faulty", "failed both burn-in rounds");
  for (const int n : r.policy.stragglers_median) mark(n, "straggler", "burn-in over 2x the median");
  for (const int n : r.policy.stragglers_sigma) mark(n, "straggler", "burn-in over mean + 3 sigma");
  for (const auto& a : actions)
    if (a.act == Act::Replace && a.node >= 0) r.ranks[static_cast<std::size_t>(a.node)].evict = true;
}

}  // namespace

bool PrecheckReport::problems() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const RankVerdict& v) { return v.verdict != "ok" || v.evict; });
}

std::vector<int> PrecheckReport::evicted() const {
  std::vector<int> out;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i].evict) out.push_back(static_cast<int>(i));
  return out;
}

PrecheckReport run_live_precheck(Bootstrap& boot, ComputeDevice& device, const control::Controller& controller,
                                 const PrecheckOptions& options) {
  // Bounds every wait on another rank: one stuck in a driver call fails the check, not hangs it.
  boot.set_patience(120 + 4 * options.timeout_s);
  DeviceCheck own;
  std::vector<int> everyone(static_cast<std::size_t>(boot.size()));
  for (int r = 0; r < boot.size(); ++r) everyone[static_cast<std::size_t>(r)] = r;
  each_in_turn(boot, device, everyone, [&] { own = check_own_device(device, boot.rank(), options); });
  auto all = boot.allgather(to_bytes(own));
  // A GEMM that looks slow is measured again before the verdict: a busy moment on the host (or a
  // neighbour's burst) must not make a healthy device a straggler. It keeps its better figure.
  std::vector<DeviceCheck> devices;
  for (const auto& b : all) devices.push_back(from_bytes<DeviceCheck>(b));
  // Up to three more tries each, ending as soon as no rank is below the limit: a machine busy
  // with other work stays busy for a while, and one try more was not enough at load average 8.
  for (int attempt = 0; attempt < 3; ++attempt) {
    const std::vector<int> suspects = slow_gemm_ranks(devices, options);
    if (suspects.empty()) break;
    each_in_turn(boot, device, suspects, [&] {
      if (own.error[0] == '\0') own.gemm_flops = std::max(own.gemm_flops, device.gemm_flops(options.gemm_n, options.gemm_iterations));
    });
    all = boot.allgather(to_bytes(own));
    devices.clear();
    for (const auto& b : all) devices.push_back(from_bytes<DeviceCheck>(b));
  }
  const bool failed_check = failed_own_check(own, options);
  PrecheckReport report;
  if (boot.rank() != 0) {
    // Follow rank 0's rounds until it sends no groups.
    for (;;) {
      const NodeGroups groups = decode(boot.allgather({})[0]);
      if (groups.empty()) return report;
      boot.allgather(to_bytes(run_my_group(boot, device, groups, failed_check, options)));
    }
  }
  report.backend = device.backend();
  report.options = options;
  for (const auto& b : all) report.devices.push_back(from_bytes<DeviceCheck>(b));
  std::vector<int> ranks(static_cast<std::size_t>(boot.size()));
  for (int r = 0; r < boot.size(); ++r) ranks[static_cast<std::size_t>(r)] = r;
  LiveRunner runner(boot, device, failed_check, options);
  std::vector<control::Action> actions;
  controller.precheck(ranks, runner, actions);
  boot.allgather(encode({}));  // done
  report.rounds = runner.rounds;
  // The same verdict the controller took its actions from, kept for the report: its rounds
  // replayed, confirmations included (PrecheckRounds is a function of the times it is given), so a
  // suspect a confirmation cleared is not named a straggler beside an `evict` of false.
  const int confirmations = std::max(0, static_cast<int>(report.rounds.size()) - 2);
  PrecheckRounds replay(ranks, options.timeout_s, confirmations);
  bool replayed = true;
  for (const RoundResult& round : report.rounds) {
    if (replay.done() || replay.groups() != round.groups) {
      replayed = false;
      break;
    }
    replay.record(round.group_s);
  }
  if (replayed && replay.done()) {
    report.policy = replay.verdict();
  } else {  // not the controller's rounds (another controller): rounds 0 and 1 as measured
    NodeTimes t0, t1;
    for (int round = 0; round < 2 && round < static_cast<int>(report.rounds.size()); ++round)
      for (std::size_t g = 0; g < report.rounds[round].groups.size(); ++g)
        for (const int n : report.rounds[round].groups[g]) (round == 0 ? t0 : t1)[n] = report.rounds[round].group_s[g];
    report.policy = precheck_verdict(t0, t1, options.timeout_s);
  }
  judge(report, actions);
  return report;
}

}  // namespace ctwin::live
