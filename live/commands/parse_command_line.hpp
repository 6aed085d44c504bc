#pragma once
//! Parsing a command line with CLI11, for `ctwin-live` and `ctwin` alike (the lowest floor that
//! has a command line is the node side's).

#include <optional>

#include <CLI/CLI.hpp>

#include "core/errors.hpp"

namespace ctwin {

//! nullopt when the command should run; else the exit code, said on the way: 0 after --help or
//! --version, 2 (bad input) after a parse error.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {  // --help and --version arrive as ParseErrors with code 0
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  return std::nullopt;
}

}  // namespace ctwin
