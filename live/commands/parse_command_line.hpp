#pragma once
//! Parsing a command line with CLI11, for `ctwin-live` and `ctwin` alike (the lowest floor that
//! has a command line is the node side's).

#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "core/errors.hpp"

namespace ctwin {

//! nullopt when the command should run; else the exit code, said on the way: 0 after --help or
//! --version, 2 (bad input) after a parse error.
//!
//! An output given as `-` (`--json -`) goes to stdout (core/atomic_file.hpp), and everything the
//! command would print there goes to stderr instead, so `ctwin run --json - | jq` reads JSON only.
inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {  // --help and --version arrive as ParseErrors with code 0
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  int to_stdout = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;  // the trainer's own command line follows
    const std::string before = i > 1 ? argv[i - 1] : "";
    const bool value_dash = arg == "-" && before.size() > 2 && before.rfind("--", 0) == 0;
    const bool inline_dash = arg.rfind("--", 0) == 0 && arg.size() > 2 && arg.substr(arg.size() - 2) == "=-";
    to_stdout += (value_dash || inline_dash) ? 1 : 0;
  }
  if (to_stdout > 1) {
    std::cerr << "ctwin: only one output may go to stdout ('-')\n";
    return kExitBadInput;
  }
  if (to_stdout == 1) std::cout.rdbuf(std::cerr.rdbuf());
  return std::nullopt;
}

}  // namespace ctwin
