#include "cli/step_command.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/command_line.hpp"
#include "models/scenario_loader.hpp"
#include "core/ranks.hpp"
#include "core/atomic_file.hpp"
#include "sim/step_cache.hpp"

namespace ctwin {

namespace {

//! "GPU=FACTOR" -> the map entry; false if it does not parse.
bool parse_factor(const std::string& text, std::map<int, double>& into) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) return false;
  try {
    std::size_t used = 0;
    const int gpu = std::stoi(text.substr(0, eq), &used);
    if (used != eq || gpu < 0) return false;
    const double factor = std::stod(text.substr(eq + 1), &used);
    if (used != text.size() - eq - 1 || factor < 0 || factor > 1) return false;
    into[gpu] = factor;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string seconds_text(double s) {
  char out[32];
  std::snprintf(out, sizeof out, s >= 1 ? "%.3f s" : "%.3f ms", s >= 1 ? s : s * 1e3);
  return out;
}

}  // namespace

StepCommand::StepCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("step", "the step time of the scenario's workload: compute, bubble, exposed communication");
  cmd_->add_option("scenario", scenario_, "scenario file with a workload section")->required();
  cmd_->add_option("--json", json_, "write the breakdown as JSON");
  cmd_->add_option("--slow-gpu", slow_gpus_, "GPU=SPEED: a GPU at this fraction of full speed (global GPU id)");
  cmd_->add_option("--nic", nics_, "GPU=FACTOR: that GPU's NIC at this fraction of its bandwidth (0: down)");
  cmd_->add_option("--nvlink", nvlinks_, "GPU=FACTOR: that GPU's NVLink port at this fraction (0: down)");
  cmd_->add_option("--dp-width", dp_width_, "data-parallel replicas running (a shrunk job), the global batch kept")
      ->check(CLI::Range(1, 100000000));
  cmd_->add_option("--uplink", uplink_, "every leaf's uplink at this fraction of its bandwidth (a slow or failed spine)")
      ->check(CLI::Range(0.0, 1.0));
}

std::optional<int> StepCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--json", json_)) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int StepCommand::run() {
  const Scenario s = load_scenario(scenario_);
  if (!s.workload) throw ScenarioInvalid(scenario_, {{"/workload", "missing: `ctwin step` needs the model and its layout"}});
  StepState state;
  for (const auto& [flag, list, into] : {std::tuple{"--slow-gpu", &slow_gpus_, &state.gpu_speed},
                                         std::tuple{"--nic", &nics_, &state.fabric.nic_factor},
                                         std::tuple{"--nvlink", &nvlinks_, &state.fabric.nvlink_factor}})
    for (const auto& text : *list)
      if (!parse_factor(text, *into)) {
        std::cerr << "ctwin: " << flag << " " << text << ": expected GPU=FACTOR with a factor between 0 and 1\n";
        return cli::kExitBadInput;
      }
  if (dp_width_ > s.workload->workload.layout.dp) {
    std::cerr << "ctwin: --dp-width " << dp_width_ << ": the layout has only " << s.workload->workload.layout.dp << " replicas\n";
    return cli::kExitBadInput;
  }
  state.dp_width = dp_width_;
  state.fabric.uplink_factor = uplink_;
  const StepBreakdown b = StepCache::shared().get(*s.workload, state);
  const auto& l = s.workload->workload.layout;
  std::cout << "ctwin step: " << s.name << "  (" << b.gpus << " GPUs: tp " << l.tp << " x pp " << l.pp << " x dp "
            << (dp_width_ > 0 ? dp_width_ : l.dp) << " x cp " << l.cp << ", global batch " << l.global_batch << ")\n\n";
  if (b.hung) {
    std::cout << "  HUNG: a collective crosses a dead port; the watchdog fires after " << seconds_text(b.step_s) << "\n";
  } else {
    auto row = [&](const char* what, double v) {
      char line[120];
      std::snprintf(line, sizeof line, "    %-28s %12s  %6.2f %%\n", what, seconds_text(v).c_str(), 100 * v / b.step_s);
      std::cout << line;
    };
    std::cout << "  step time        " << seconds_text(b.step_s) << "\n  tokens per s     " << b.tokens_per_s
              << "\n  MFU              " << 100 * b.mfu << " %\n\n  breakdown\n";
    row("compute", b.compute_s);
    row("pipeline bubble", b.bubble_s);
    row("tensor-parallel exposed", b.tp_exposed_s);
    row("pipeline transfers exposed", b.pp_exposed_s);
    row("data-parallel exposed", b.dp_exposed_s);
    if (l.ep > 1) row("expert all-to-alls exposed", b.ep_exposed_s);
    if (l.cp > 1) row("context K/V ring exposed", b.cp_exposed_s);
    std::cout << "\n  one TP all-reduce " << seconds_text(b.tp_collective_s) << ", one stage transfer "
              << seconds_text(b.pp_transfer_s) << ", the gradient reduction " << seconds_text(b.dp_collective_s);
    if (l.ep > 1) std::cout << ", one expert all-to-all " << seconds_text(b.ep_collective_s);
    if (l.cp > 1) std::cout << ", one K/V ring step " << seconds_text(b.cp_transfer_s);
    std::cout << "\n";
  }
  if (json_.empty() || !Ranks::world().is_root()) return 0;
  nlohmann::ordered_json j{{"schema_version", 1}, {"command", "step"}, {"scenario", s.name}, {"scenario_hash", s.content_hash},
                           {"gpus", b.gpus}, {"hung", b.hung}, {"step_s", b.step_s}, {"tokens_per_s", b.tokens_per_s},
                           {"mfu", b.mfu},
                           {"breakdown_s", {{"compute", b.compute_s}, {"pipeline_bubble", b.bubble_s}, {"tp_exposed", b.tp_exposed_s},
                                            {"pp_exposed", b.pp_exposed_s}, {"dp_exposed", b.dp_exposed_s},
                                            {"ep_exposed", b.ep_exposed_s}, {"cp_exposed", b.cp_exposed_s}}},
                           {"collectives_s", {{"tp_all_reduce", b.tp_collective_s}, {"pp_transfer", b.pp_transfer_s},
                                              {"dp_gradients", b.dp_collective_s}, {"ep_all_to_all", b.ep_collective_s},
                                              {"cp_ring_step", b.cp_transfer_s}}}};
  write_file_atomically(json_, j.dump(2) + "\n");
  return 0;
}

}  // namespace ctwin
