#pragma once
//! `ctwin calibrate TRACE... [--base SCENARIO] --out calibrated.json [--report report.json] [--plots DIR]`.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace ctwin {

class CalibrateCommand {
 public:
  explicit CalibrateCommand(CLI::App& app);
  std::optional<int> dispatch();

 private:
  int run();
  CLI::App* cmd_ = nullptr;
  std::vector<std::string> traces_;
  std::string base_, out_, report_, plots_, prior_;
  int year_ = 1970, gpus_per_node_ = 8;
  double dedupe_s_ = 60, confidence_ = 0.95;
  bool slow_nodes_without_stages_ = false;
};

}  // namespace ctwin
