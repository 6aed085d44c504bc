#include "cli/timeline_command.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/atomic_file.hpp"
#include "core/command_line.hpp"
#include "core/event_log.hpp"
#include "core/text_records.hpp"
#include "report/timeline.hpp"

namespace ctwin {

TimelineCommand::TimelineCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("timeline", "a Chrome trace (Perfetto) of any event log: a live job's, or a simulated trial's");
  cmd_->add_option("events", log_, "event log (CSV: " + std::string(kEventLogHeader) + ")")->required();
  cmd_->add_option("--out", out_, "write the trace (JSON) here; '-' for stdout")->required();
  cmd_->add_option("--title", title_, "the trace's name (default: the log's file name)");
}

std::optional<int> TimelineCommand::dispatch() {
  if (!*cmd_) return std::nullopt;
  if (!cli::check_output_path("--out", out_)) return cli::kExitBadInput;
  return cli::run_reporting_errors([this] { return run(); });
}

int TimelineCommand::run() {
  std::ifstream in = open_trace(log_);
  if (!looks_like_event_log(first_line(log_)))
    throw TraceUnreadable(log_ + ": line 1: not an event log (header " + std::string(kEventLogHeader) + ")");
  const EventLog log = read_event_log(in, log_);
  log.report.require_some();
  const std::string title = title_.empty() ? std::filesystem::path(log_).filename().string() : title_;
  write_file_atomically(out_, timeline_json(title, log.events));
  if (out_ != "-")
    std::cerr << "ctwin timeline: " << log.events.size() << " events of " << log_ << " -> " << out_ << " (open it in https://ui.perfetto.dev)\n";
  return 0;
}

}  // namespace ctwin
