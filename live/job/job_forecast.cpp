// The rest of the run, forecast while it runs (`ctwin live master --forecast`): the job's own
// interruptions and exposure weigh the scenario's belief in its rates (policies/run_forecast), so
// its interval narrows as the job goes on. Served in the status, the metrics and, at each interruption, the log.
#include <cstdio>
#include <iostream>

#include "live/job/job_master.hpp"

namespace ctwin::live {

void JobMaster::update_forecast(Clock::time_point now) {
  if (!forecaster_ || phase_ != Phase::Running) return;
  long seen = 0;
  for (const auto& [fault_class, n] : interruptions_) seen += n;
  const bool news = seen != forecast_logged_;
  if (!news && forecast_ && now - forecast_at_ < std::chrono::seconds(5)) return;
  forecast_at_ = now;
  JobSoFar so_far;
  so_far.ledger = ledger_.ledger();
  so_far.wall_s = micros_to_seconds(ledger_.marked());  // what the ledger has charged: its categories add up to it
  so_far.interruptions = interruptions_;
  so_far.nodes = width();
  so_far.steps_done = std::max<std::int64_t>(book_.step(), 0);
  so_far.total_steps = o_.total_steps;
  const double step_s = book_.step_s();
  if (!cadence_.changes.empty() && step_s > 0) so_far.checkpoint_interval_s = static_cast<double>(cadence_.changes.back().every) * step_s;
  // The same state draws the same rest: the seed is the interruptions seen.
  forecast_ = forecaster_->forecast(so_far, static_cast<std::uint64_t>(seen) + 1);
  if (!news || !forecast_->known) return;
  forecast_logged_ = seen;
  const RunForecast& f = *forecast_;
  char note[320];
  std::snprintf(note, sizeof note,
                "forecast %s remaining_s=%.3f p5=%.3f p95=%.3f final_goodput=%.4f p5=%.4f p95=%.4f goodput_to_date=%.4f interruptions=%ld "
                "rate_per_day=%.4g p5=%.4g p95=%.4g%s",
                f.by_steps ? "steps" : "horizon", f.remaining_wall_s_p50, f.remaining_wall_s_p05, f.remaining_wall_s_p95, f.final_goodput_p50,
                f.final_goodput_p05, f.final_goodput_p95, f.goodput_to_date, f.interruptions, f.rate_per_day_p50, f.rate_per_day_p05,
                f.rate_per_day_p95, f.belief_overruled ? " belief=overruled" : "");
  record(ledger_.marked(), EventKind::Health, note);
  std::cerr << "ctwin master: " << note << "\n";
}

nlohmann::json JobMaster::forecast_status() const {
  if (!forecast_) return nullptr;
  const RunForecast& f = *forecast_;
  auto three = [](double p5, double p50, double p95) { return nlohmann::json{{"p5", p5}, {"p50", p50}, {"p95", p95}}; };
  nlohmann::json j{{"goodput_to_date", f.goodput_to_date},
                   {"interruptions", f.interruptions},
                   {"interruptions_per_day", three(f.rate_per_day_p05, f.rate_per_day_p50, f.rate_per_day_p95)},
                   {"cost_per_interruption_s", f.cost_per_interruption_s},
                   {"checkpoint_share", f.checkpoint_share},
                   {"effective_draws", f.effective_draws},
                   {"belief_overruled", f.belief_overruled}};
  if (f.known) {
    j["until"] = f.by_steps ? "the steps left (--total-steps)" : "the scenario's horizon";
    j["remaining_wall_s"] = three(f.remaining_wall_s_p05, f.remaining_wall_s_p50, f.remaining_wall_s_p95);
    j["final_goodput"] = three(f.final_goodput_p05, f.final_goodput_p50, f.final_goodput_p95);
  }
  return j;
}

}  // namespace ctwin::live
