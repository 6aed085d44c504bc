#include "cli/step_command.hpp"

#include <cstdio>
#include <iostream>

#include "core/command_line.hpp"
#include "models/scenario_loader.hpp"
#include "core/ranks.hpp"
#include "core/atomic_file.hpp"
#include "report/step_report.hpp"
#include "sim/step_cache.hpp"
#include "sim/step_sensitivity.hpp"

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
  cmd_->add_flag("--sensitivity", sensitivity_,
                 "the step time over the plausible values of each field, one at a time: the layout (rank order, sequence parallelism, "
                 "virtual stages, schedule, recomputation, activation offload, embedding/loss split, CP algorithm, micro-batch) and "
                 "the efficiencies other stacks and kernels reach (GEMM, attention); names the assumed field that moves it most");
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
  if (sensitivity_ && (state.dp_width > 0 || !state.gpu_speed.empty() || !state.fabric.nic_factor.empty() ||
                       !state.fabric.nvlink_factor.empty() || state.fabric.uplink_factor != 1)) {
    std::cerr << "ctwin: --sensitivity is for the healthy fabric at full width: drop --slow-gpu, --nic, --nvlink, --uplink and --dp-width\n";
    return cli::kExitBadInput;
  }
  const StepBreakdown b = StepCache::shared().get(*s.workload, state);
  // The range is the healthy step's at full width: over what was assumed, one field at a time.
  const bool healthy = state.dp_width == 0 && state.gpu_speed.empty() && state.fabric.nic_factor.empty() &&
                       state.fabric.nvlink_factor.empty() && state.fabric.uplink_factor == 1 && !b.hung;
  std::optional<StepSensitivity> sensitivity;
  if (healthy) sensitivity = step_sensitivity(*s.workload, s.cluster.gpus_per_node, s.cluster.gpu_memory_bytes, StepCache::shared());
  std::cout << step_text(s, b, dp_width_, sensitivity ? &sensitivity->range : nullptr);
  if (sensitivity_) std::cout << sensitivity_text(*sensitivity);
  if (json_.empty() || !Ranks::world().is_root()) return 0;
  write_file_atomically(json_, step_json(s, b, sensitivity_ ? &*sensitivity : nullptr, sensitivity ? &sensitivity->range : nullptr));
  return 0;
}

}  // namespace ctwin
